//go:build !linux

package pgtest

import (
	"os"
	"syscall"
)

// procAttr runs the server's programs as this user: elsewhere than Linux,
// tests do not run as root.
func procAttr() *syscall.SysProcAttr { return nil }

func tempDir() (string, error) { return os.MkdirTemp("", "pgtest-") }

func chownForServer(string) {}
