//go:build unix

package privfile

import (
	"errors"
	"os"
	"syscall"
)

const openBlocksRemove = false

func restrict(string) error { return nil }

// tryLock uses flock(2), whose locks belong to the open file: two opens in
// one process exclude each other too.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

func replace(from, to string) error { return os.Rename(from, to) }
