//go:build unix

package config

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// mkfifo makes a FIFO at path. Should a test open it for reading and block,
// the cleanup opens it for writing, which releases the reader.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
}
