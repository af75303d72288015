//go:build !linux

package chromium

import (
	"os/exec"
	"syscall"
)

const supported = false

func groupAttr() *syscall.SysProcAttr { return nil }

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
