//go:build !unix

package nginxtest

import (
	"os"
	"syscall"
)

// supported: nginxtest runs nginx on Unix only.
const supported = false

func procAttr() *syscall.SysProcAttr { return nil }

func quit(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func terminate(pid int) { quit(pid) }

func killGroup(pid int) { quit(pid) }

func hangup(int) {}
