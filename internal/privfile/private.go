package privfile

import (
	"errors"
	"os"
)

// ErrNotPrivate is returned for a file or directory that another user owns,
// or that group or others may reach: what is kept in it is not the user's
// alone.
var ErrNotPrivate = errors.New("not private")

// CheckPrivate checks that path (a symbolic link is not followed) is owned
// by the current user and gives group and others no access: mode 0700 for
// a directory, 0600 for a file, or stricter. On Windows, where mode bits
// mean little and Restrict sets who may reach a path, it checks nothing.
// Its errors wrap ErrNotPrivate and say what is wrong; they do not name
// path: callers do.
func CheckPrivate(path string) error { return checkPrivate(path, 0o077) }

// CheckOwned checks that path (a symbolic link is not followed) is owned
// by the current user and that group and others may not change it (mode
// bits 022 clear): what is made in a directory that passes is the user's
// to keep, though others may see its names. On Windows it checks nothing,
// as CheckPrivate. Its errors wrap ErrNotPrivate.
func CheckOwned(path string) error { return checkPrivate(path, 0o022) }

// ReadPrivate reads a whole private regular file of at most limit bytes:
// one that is not regular (a FIFO, a device), that another user owns, or
// that group or others may reach is refused before it is read (see
// CheckPrivate; on Windows only the kind and the size are checked). The
// file opened is what is checked, not only its name. Errors do not name
// the file: callers do.
func ReadPrivate(path string, limit int64) ([]byte, error) {
	return readWhole(path, "", limit, func(st os.FileInfo) error { return privateInfo(st, 0o077) })
}
