//go:build unix

package mcptest

import (
	"os/exec"
	"syscall"
)

// groupAttr starts a command in a new process group.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup sends SIGKILL to the process group of a started cmd. The group
// outlives its leader while any member lives, so this also reaches
// grandchildren of an exited leader.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
