package privfile

// Reading and writing whole files that a person edits (configuration
// files, ours and other programs'): bounded, never blocking, and replaced
// atomically.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ReadRegular reads a whole regular file of at most limit bytes. Errors do
// not name the file: callers do.
func ReadRegular(path string, limit int64) ([]byte, error) {
	return readWhole(path, "save the configuration to a file and name that", limit, nil)
}

// readWhole reads a whole regular file of at most limit bytes, after check
// (if not nil) has passed the file opened. hint says what to do with a
// file that is not regular.
func readWhole(path, hint string, limit int64, check func(os.FileInfo) error) ([]byte, error) {
	f, err := openRegular(path, hint)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(st); err != nil {
			return nil, err
		}
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%d bytes is over the limit of %d", st.Size(), limit)
	}
	// Read to the limit, not to the size seen: the file may grow meanwhile.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("over the limit of %d bytes", limit)
	}
	return data, nil
}

// openRegular opens path for reading if it is a regular file, and refuses
// anything else with an error that says what it is. Opening a FIFO for
// reading blocks until a writer comes, and reading a device may never end,
// so a configuration named with --config could otherwise stall a command
// forever: the name is checked before opening, and the file actually
// opened is checked again, without blocking, in case the name changed
// between the two.
func openRegular(path, hint string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(st.Mode(), hint); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err = f.Stat()
	if err == nil {
		err = regular(st.Mode(), hint)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// regular returns an error naming the kind of a file that is not regular,
// with hint, if not empty.
func regular(m fs.FileMode, hint string) error {
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return errors.New("it is a directory, not a file")
	}
	what := "an irregular file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		what = "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	}
	if hint != "" {
		return fmt.Errorf("it is %s, not a regular file, and only regular files are read (hint: %s)", what, hint)
	}
	return fmt.Errorf("it is %s, not a regular file, and only regular files are read", what)
}

// WriteAtomic replaces path with data through a temporary file in the same
// directory and a rename (Replace: MoveFileEx on Windows), so a
// reader sees the old file or the new one, never a part. An existing file
// keeps its mode.
func WriteAtomic(path string, data []byte, mode os.FileMode) (err error) {
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = Replace(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
