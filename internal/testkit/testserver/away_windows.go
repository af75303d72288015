package testserver

import "syscall"

// awayAttr is nil on Windows, where a Job Object, not a process group,
// holds a server's processes.
func awayAttr() *syscall.SysProcAttr { return nil }
