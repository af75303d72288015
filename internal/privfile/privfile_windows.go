package privfile

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

const openBlocksRemove = true

// restrict sets the owner-only DACL of ownerOnlySDDL on path.
func restrict(path string) error {
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return fmt.Errorf("restricting %s to its owner: finding the current user: %w", path, err)
	}
	sd, err := windows.SecurityDescriptorFromString(ownerOnlySDDL(user.User.Sid.String()))
	if err != nil {
		return fmt.Errorf("restricting %s to its owner: %w", path, err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return fmt.Errorf("restricting %s to its owner: %w", path, err)
	}
	err = windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil)
	if err != nil {
		return fmt.Errorf("restricting %s to its owner: %w", path, err)
	}
	return nil
}

// lockRange is the byte range that tryLock locks: one byte at offset 0,
// which Windows allows past the end of the file (lock files are empty).
// Windows locks a range, not the file, and the lock belongs to the handle:
// two opens in one process exclude each other too.
const lockRange = 1

func tryLock(f *os.File) (bool, error) {
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()),
		windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, lockRange, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return false, nil
	}
	return err == nil, err
}

func unlock(f *os.File) error {
	var ol windows.Overlapped
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, lockRange, 0, &ol)
}

// replace is MoveFileEx with MOVEFILE_REPLACE_EXISTING, as os.Rename, and
// MOVEFILE_WRITE_THROUGH, so that it returns once the move is on disk. A
// reader that has the old file open without FILE_SHARE_DELETE (os.Open
// does not ask for it) makes it fail with a sharing violation or access
// denied until the reader closes it: those are tried again.
func replace(from, to string) error {
	pfrom, err := windows.UTF16PtrFromString(from)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	pto, err := windows.UTF16PtrFromString(to)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	err = retry(func() error {
		return windows.MoveFileEx(pfrom, pto, windows.MOVEFILE_REPLACE_EXISTING|windows.MOVEFILE_WRITE_THROUGH)
	}, transient, replaceWait, time.Sleep)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// transient reports whether a failed move may succeed once another
// process closes the file.
func transient(err error) bool {
	return errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED) ||
		errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}
