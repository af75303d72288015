package mcptest

import (
	"os/exec"
	"syscall"
)

// groupAttr starts a command as it is: the tests that need process groups
// run on Unix; on Windows this package only compiles.
func groupAttr() *syscall.SysProcAttr { return nil }

// killGroup kills a started cmd itself; its descendants are not reached.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
