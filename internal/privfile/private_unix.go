//go:build unix

package privfile

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkPrivate checks the owner of path and that its mode has none of the
// bits of others.
func checkPrivate(path string, others fs.FileMode) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%w: it is a symbolic link", ErrNotPrivate)
	}
	return privateInfo(st, others)
}

// privateInfo checks the owner of what st describes, and that its mode
// has none of the bits of others.
func privateInfo(st fs.FileInfo, others fs.FileMode) error {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		if me := os.Getuid(); int(sys.Uid) != me {
			return fmt.Errorf("%w: it belongs to user %d, not to you (user %d)", ErrNotPrivate, sys.Uid, me)
		}
	}
	if perm := st.Mode().Perm(); perm&others != 0 {
		what := "read"
		if perm&0o022 != 0 {
			what = "change"
		}
		if perm&0o044 != 0 && perm&0o022 != 0 {
			what = "read and change"
		}
		if st.IsDir() {
			what = "reach"
		}
		return fmt.Errorf("%w: its mode %04o lets other users %s it", ErrNotPrivate, perm, what)
	}
	return nil
}
