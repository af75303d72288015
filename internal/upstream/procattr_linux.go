package upstream

import "syscall"

// sysProcAttr puts the child in its own process group, so that closing it
// reaches its descendants, and asks the kernel to kill it should switchboard
// die without closing it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
