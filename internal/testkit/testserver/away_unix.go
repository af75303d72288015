//go:build unix

package testserver

import "syscall"

// awayAttr starts a process in a session, and so a process group, of its
// own: it leaves its parent's group.
func awayAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
