// Package logfile is serve's log file in the state directory: a file of
// mode 0600 that every serve process appends to, rotated by size (the
// current file becomes NAME.1, NAME.1 becomes NAME.2, the oldest goes), and
// the reading side of `switchboard logs`: the files in order, lines
// filtered by server and age, and following the file as it grows and
// rotates.
//
// Several processes may write at once (each agent host starts its own
// serve): each line is one append, and rotation is done under a lock file
// by whichever writer sees the file over its size first; the others notice
// that the file they hold was renamed and open the new one.
package logfile

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/switchboard-mcp/switchboard/internal/privfile"
)

// Defaults.
const (
	DefaultMaxBytes = 5 << 20 // per file
	Keep            = 2       // rotated files kept: NAME.1, NAME.2
)

// Writer appends to a log file, rotating it by size. It is safe for
// concurrent use; each Write should be one whole line.
type Writer struct {
	path string
	max  int64

	mu     sync.Mutex
	f      *os.File // nil after a failed reopen: the next Write tries again
	closed bool
}

// Open opens the log file at path for appending, creating it (mode 0600)
// and its directory (mode 0700) if needed. maxBytes <= 0 means
// DefaultMaxBytes.
func Open(path string, maxBytes int64) (*Writer, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if err := privfile.MkdirAll(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("creating the log directory: %w", err)
	}
	w := &Writer{path: path, max: maxBytes}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *Writer) open() error {
	f, err := os.OpenFile(w.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("opening the log file: %w", err)
	}
	if err := privfile.Restrict(w.path); err != nil {
		f.Close()
		return fmt.Errorf("restricting the log file: %w", err)
	}
	w.f = f
	return nil
}

// Write appends p, first rotating the file if p would take it over its
// size. A failure to rotate is not an error: the line is still written.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, os.ErrClosed
	}
	if w.f == nil {
		if err := w.open(); err != nil {
			return 0, err
		}
	}
	if fi, err := w.f.Stat(); err == nil && fi.Size()+int64(len(p)) > w.max && fi.Size() > 0 {
		w.rotate(fi)
		if w.f == nil {
			return 0, fmt.Errorf("reopening the log file %s after rotating it", w.path)
		}
	}
	return w.f.Write(p)
}

// rotate renames the files along, unless another writer has done so since
// ours went over its size, and opens the new file. w.mu is held.
func (w *Writer) rotate(ours os.FileInfo) {
	lock, err := os.OpenFile(w.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return
	}
	defer lock.Close()
	if ok, err := privfile.TryLock(lock); err != nil || !ok {
		return // another writer is rotating: write to ours this time
	}
	defer privfile.Unlock(lock)
	// Ours is closed first: Windows renames no file that is open, ours
	// included (where another process has it open, the rename fails and
	// the file grows until it can be renamed).
	w.f.Close()
	w.f = nil
	if cur, err := os.Stat(w.path); err == nil && os.SameFile(cur, ours) {
		for i := Keep; i > 1; i-- {
			_ = os.Rename(fmt.Sprintf("%s.%d", w.path, i-1), fmt.Sprintf("%s.%d", w.path, i))
		}
		_ = os.Rename(w.path, w.path+".1")
	}
	_ = w.open() // on failure, Write tries again
}

// Close closes the file. It is idempotent.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// Files returns the log files at path, oldest first, that exist.
func Files(path string) []string {
	var out []string
	for i := Keep; i >= 1; i-- {
		p := fmt.Sprintf("%s.%d", path, i)
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	if _, err := os.Stat(path); err == nil {
		out = append(out, path)
	}
	return out
}
