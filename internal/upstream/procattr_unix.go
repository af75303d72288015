//go:build unix && !linux

package upstream

import "syscall"

// sysProcAttr puts the child in its own process group, so that closing it
// reaches its descendants.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
