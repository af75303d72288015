package bound

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/privfile"
)

// Spiller writes what does not fit into files of its own directory.
// The zero value is not usable; create one with NewSpiller.
// Its methods are safe for concurrent use.
type Spiller struct {
	base   string
	limits Limits

	mu     sync.Mutex
	dir    string   // created on first spill
	lock   *os.File // holds an exclusive lock (privfile.TryLock) while the directory is in use
	n      int      // files written
	closed bool
}

// NewSpiller returns a Spiller that creates its directory under base (for
// example os.TempDir()/switchboard-spill-UID) on first use. base, made if
// missing, must be the user's alone (see CheckBase): spills in one that
// is not fail, saying why.
func NewSpiller(base string, limits Limits) *Spiller {
	return &Spiller{base: base, limits: limits.withDefaults()}
}

// Limits returns the limits the Spiller applies.
func (s *Spiller) Limits() Limits { return s.limits }

// Spill is a file that holds a whole result.
type Spill struct {
	Path   string `json:"path"`
	Bytes  int    `json:"bytes"`
	Lines  int    `json:"lines,omitempty"`
	Reason string `json:"reason"`
}

// Text is a bounded text result.
type Text struct {
	Text  string // the text itself, or a preview followed by a note
	Spill *Spill // where the whole text is, when it did not fit

	shown int // the bytes of the preview, when it did not fit
}

// Text bounds s. Text within the limits is returned as it is; longer text is
// written whole to a spill file (named after what, e.g. "call-echo") and
// replaced by a preview within the limits (its lines, less one, for the
// note) and a note naming the file, its size and the reason.
func (s *Spiller) Text(what, text string) (Text, error) {
	return s.textWithin(what, text, 0, 0)
}

// textWithin is Text for the text of a larger result, whose other parts
// take reserve bytes of the limit; the preview leaves keep bytes more to
// the parts that follow the text. The preview takes the rest of the
// budget (the note is outside it, as every note that names a spill file
// is: its length depends on the file's path, and a preview must not), and
// the lines of the limit, less the note's.
func (s *Spiller) textWithin(what, text string, reserve, keep int) (Text, error) {
	if len(text)+reserve <= s.limits.MaxBytes && Lines(text) <= s.limits.MaxLines {
		return Text{Text: text}, nil
	}
	reason := s.limits.reason(text, reserve)
	path, err := s.write(what, ".txt", []byte(text))
	if err != nil {
		return Text{}, fmt.Errorf("spilling %s (%s): %w", what, reason, err)
	}
	sp := &Spill{Path: path, Bytes: len(text), Lines: Lines(text), Reason: reason}
	// Less one byte: the line break that may end the preview before its note.
	preview := Preview(text, max(s.limits.MaxBytes-reserve-keep-1, 0), max(s.limits.MaxLines-1, 0))
	note := fmt.Sprintf("[truncated: %s; showing the first %d of %d bytes; the whole text is in %s]", reason, len(preview), len(text), path)
	shown := len(preview)
	if !strings.HasSuffix(preview, "\n") && preview != "" {
		preview += "\n"
	}
	return Text{Text: preview + note, Spill: sp, shown: shown}, nil
}

// Blob writes binary content to a spill file and returns it. ext names the
// file type, such as ".png" or ".bin".
func (s *Spiller) Blob(what, ext string, data []byte, reason string) (*Spill, error) {
	path, err := s.write(what, ext, data)
	if err != nil {
		return nil, fmt.Errorf("spilling %s: %w", what, err)
	}
	return &Spill{Path: path, Bytes: len(data), Reason: reason}, nil
}

// ErrClosed is returned by a Spiller used after Close.
var ErrClosed = errors.New("spiller is closed")

func (s *Spiller) write(what, ext string, data []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", ErrClosed
	}
	if s.dir == "" {
		if err := s.create(); err != nil {
			return "", err
		}
	}
	s.n++
	path := filepath.Join(s.dir, fmt.Sprintf("%03d-%s%s", s.n, safeName(what), ext))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	return path, f.Close()
}

// create makes the per-process directory, closed to other users, and locks
// it. It runs with mu held.
func (s *Spiller) create() error {
	if err := privfile.MkdirAll(s.base); err != nil {
		return err
	}
	if err := CheckBase(s.base); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(s.base, "p"+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return err
	}
	err = os.Chmod(dir, 0o700)
	if err == nil {
		err = privfile.Restrict(dir)
	}
	var lock *os.File
	if err == nil {
		lock, err = os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	}
	if err == nil {
		err = lockNew(lock)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		os.RemoveAll(dir)
		return err
	}
	s.dir, s.lock = dir, lock
	return nil
}

// CheckBase checks that base, the directory spill directories are made
// in, is the user's: owned by the user, and no one else may write to it
// (on Unix; the directories made in it are 0700). In a directory another
// user owns or may write to, that user could read the spill files, which
// hold whole results, or put a link of their own in their place, and
// Sweep would remove what they planted there.
func CheckBase(base string) error {
	if err := privfile.CheckOwned(base); err != nil {
		return fmt.Errorf("refusing the spill directory %s: %w; another user could read or replace the files written there (hint: if it is yours, chmod 700 %s; if not, choose a directory of your own: the library's Options.SpillDir, or $TMPDIR)", base, err, base)
	}
	return nil
}

// lockNew locks the lock file of a directory just made, which no one else
// can hold yet.
func lockNew(f *os.File) error {
	ok, err := privfile.TryLock(f)
	if err == nil && !ok {
		err = fmt.Errorf("%s is locked by another process", f.Name())
	}
	return err
}

const lockName = ".lock"

// Dir returns the spill directory, or "" before the first spill.
func (s *Spiller) Dir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir
}

// Close removes the spill directory and everything in it. It is idempotent
// and safe to call concurrently; spills after Close fail with ErrClosed.
func (s *Spiller) Close() error {
	return s.end(true)
}

// Release ends the Spiller like Close but leaves its directory and files in
// place, unlocked, for a user who reads them after the process has exited
// (the CLI prints "the whole text is in FILE" and then exits). [Sweep]
// removes them once they are old. Release and Close are idempotent, and
// whichever comes first decides; spills after either fail with ErrClosed.
func (s *Spiller) Release() error {
	return s.end(false)
}

func (s *Spiller) end(remove bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.dir == "" {
		return nil
	}
	if !remove {
		s.lock.Close()
		return nil
	}
	// Where it can, the lock is closed after the removal, so Clean never
	// sees the directory unlocked; where an open file blocks the removal
	// (Windows), before it, and a Clean in between removes it for us.
	if privfile.OpenBlocksRemove {
		s.lock.Close()
		return os.RemoveAll(s.dir)
	}
	err := os.RemoveAll(s.dir)
	s.lock.Close()
	return err
}

// Clean removes the spill directories under base left by processes that
// ended without closing their Spiller. A directory is left alone while its
// owner holds the lock, so a live process never loses its files, whatever
// its pid. It returns the directories removed. It is Sweep with no age.
func Clean(base string) ([]string, error) {
	return Sweep(base, 0)
}

// Sweep removes the spill directories under base that no live process
// holds and that nothing was written to for longer than olderThan: those
// of processes that Released their Spiller, once their user has had time
// to read them, and those of processes that died. A directory's age is
// that of its last write (its modification time). It returns the
// directories removed. A base that is not the user's alone (CheckBase) is
// left as it is, with an error.
func Sweep(base string, olderThan time.Duration) ([]string, error) {
	entries, err := os.ReadDir(base)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := CheckBase(base); err != nil {
		return nil, err // what is in it is not ours to remove
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "p") {
			continue
		}
		dir := filepath.Join(base, e.Name())
		if !abandoned(dir) || !olderThanAge(dir, olderThan) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

// olderThanAge reports whether nothing was written to dir for longer than
// age. A zero age is always passed.
func olderThanAge(dir string, age time.Duration) bool {
	if age <= 0 {
		return true
	}
	st, err := os.Stat(dir)
	return err == nil && time.Since(st.ModTime()) > age
}

// abandoned reports whether no process holds the lock of dir.
func abandoned(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		// Its owner may be between creating it and locking it: wait a
		// while before calling it abandoned.
		st, err := os.Stat(dir)
		return err == nil && time.Since(st.ModTime()) > time.Minute
	}
	if err != nil {
		return false
	}
	defer f.Close()
	if ok, err := privfile.TryLock(f); !ok || err != nil {
		return false
	}
	_ = privfile.Unlock(f)
	return true
}

func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	if b.Len() == 0 {
		return "result"
	}
	return b.String()
}
