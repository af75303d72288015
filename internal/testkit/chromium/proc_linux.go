package chromium

import (
	"os/exec"
	"syscall"
)

const supported = true

// groupAttr starts a command in a new process group.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup sends SIGKILL to the process group of a started cmd, which
// reaches the browser's helper processes too.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
