// Package privfile keeps the files that are the user's alone: spill files,
// credentials, trust and other state. It does, on each platform, what those
// files need from the operating system:
//
//   - owner-only access: mode bits on Unix (set by the callers, which know
//     the mode each file wants), a protected access-control list that grants
//     the current user alone on Windows, where mode bits mean little;
//   - an exclusive lock across processes, released by the system when its
//     holder dies: flock(2) on Unix, LockFileEx on Windows;
//   - atomic replacement of one file by another: rename(2) on Unix,
//     MoveFileEx with MOVEFILE_REPLACE_EXISTING on Windows, retried while
//     another process briefly has the old file open.
//
// The decisions in it that do not need the system (the access-control list
// it writes, when a replacement is retried) are plain functions, tested on
// every platform.
package privfile

import (
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// MkdirAll creates dir and its missing parents, mode 0700, and restricts
// dir itself to its owner (see [Restrict]), also when it already existed.
func MkdirAll(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return Restrict(dir)
}

// Restrict makes path, a file or directory, accessible to its owner alone,
// and a directory's future contents with it. On Unix it does nothing: the
// callers create files with the mode they want (0600, 0700), which the
// system honours. On Windows it replaces the access-control list with one
// that grants the current user full control, inherited by what the
// directory will hold, and blocks inheritance from the parent.
func Restrict(path string) error { return restrict(path) }

// TryLock takes an exclusive lock on f without waiting. It reports false,
// with no error, when another open file holds the lock, in this process or
// another. The lock ends with Unlock, when f is closed, or when the process
// dies, however it dies.
func TryLock(f *os.File) (bool, error) { return tryLock(f) }

// Unlock releases a lock taken with TryLock.
func Unlock(f *os.File) error { return unlock(f) }

// Replace renames from to to, replacing to if it exists, so that a reader
// of to sees the old file or the new one, never a part. On Windows, where a
// file that another process has open cannot be replaced, it tries again
// for up to replaceWait.
func Replace(from, to string) error { return replace(from, to) }

// OpenBlocksRemove is true where a file that is open cannot be removed, nor
// the directory that holds it (Windows): a lock file there must be closed
// before its directory is removed.
const OpenBlocksRemove = openBlocksRemove

// replaceWait bounds how long Replace retries on Windows. Readers hold the
// files this package replaces for the time of one read.
const replaceWait = 2 * time.Second

// retry calls try until it succeeds, fails with an error that transient
// does not accept, or wait has passed; sleep waits between tries, longer
// each time. It returns the last error.
func retry(try func() error, transient func(error) bool, wait time.Duration, sleep func(time.Duration)) error {
	delay := time.Millisecond
	for spent := time.Duration(0); ; spent += delay {
		err := try()
		if err == nil || !transient(err) || spent >= wait {
			return err
		}
		sleep(delay)
		delay = min(delay*2, 100*time.Millisecond)
	}
}

// ownerOnlySDDL is the security descriptor, in the Security Descriptor
// Definition Language, that Restrict applies on Windows: a protected DACL
// ("P": nothing inherited from the parent) with one entry that allows
// ("A") full access ("FA") to the user sid, inherited by files ("OI") and
// directories ("CI") created inside.
func ownerOnlySDDL(sid string) string {
	return "D:P(A;OICI;FA;;;" + sid + ")"
}

// TempDir returns the directory name in the system's temporary directory
// for this user: name-UID on Unix, where the temporary directory is shared
// by all users; name itself on Windows, where it is the user's own
// (%LOCALAPPDATA%\Temp) and there is no numeric user id.
func TempDir(name string) string {
	return filepath.Join(os.TempDir(), tempName(name, os.Getuid()))
}

// tempName is the name TempDir uses for a user id, -1 where there is none
// (Windows).
func tempName(name string, uid int) string {
	if uid < 0 {
		return name
	}
	return name + "-" + strconv.Itoa(uid)
}
