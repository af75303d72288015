package logfile

import (
	"bufio"
	"context"
	"errors"
	"io"
	"iter"
	"os"
	"strconv"
	"strings"
	"time"
)

// Filter selects log lines. The zero value selects all.
type Filter struct {
	Server string    // only lines with server=Server
	Since  time.Time // only lines whose time= is at or after Since
}

// Match reports whether a line (in slog's text format) passes f.
func (f Filter) Match(line string) bool {
	if f.Server != "" {
		if v, ok := Field(line, "server"); !ok || v != f.Server {
			return false
		}
	}
	if !f.Since.IsZero() {
		v, ok := Field(line, "time")
		if !ok {
			return false
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil || t.Before(f.Since) {
			return false
		}
	}
	return true
}

// Field returns the value of key in a line of slog's text format
// (key=value or key="quoted value", separated by spaces), and whether the
// line has it. Only whole keys at the start of a pair match.
func Field(line, key string) (string, bool) {
	for k, v := range pairs(line) {
		if k == key {
			return v, true
		}
	}
	return "", false
}

// pairs yields the key=value pairs of a line of slog's text format, in
// order, with quoted values unquoted. A stretch with a space before its
// "=" is no key (text inside a message) and is skipped.
func pairs(line string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for i := 0; i < len(line); {
			for i < len(line) && line[i] == ' ' {
				i++
			}
			eq := strings.IndexByte(line[i:], '=')
			if eq < 0 {
				return
			}
			k := line[i : i+eq]
			i += eq + 1
			var v string
			if i < len(line) && line[i] == '"' {
				end := quoteEnd(line, i)
				raw := line[i:end]
				u, err := strconv.Unquote(raw)
				if err != nil {
					u = raw
				}
				v, i = u, end
			} else {
				end := strings.IndexByte(line[i:], ' ')
				if end < 0 {
					end = len(line) - i
				}
				v, i = line[i:i+end], i+end
			}
			if strings.ContainsRune(k, ' ') {
				continue
			}
			if !yield(k, v) {
				return
			}
		}
	}
}

// quoteEnd returns the index just past the closing quote of the quoted
// string starting at line[start], or len(line).
func quoteEnd(line string, start int) int {
	for j := start + 1; j < len(line); j++ {
		switch line[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(line)
}

// maxLine bounds one line read back; longer ones are cut.
const maxLine = 1 << 20

// Show writes the lines of the log files at path that pass f to w, oldest
// first, each whole line in one Write (so that w may be JSONLines); with follow, it then waits for more, checking every poll, until
// ctx is done (and then returns nil). A missing file is not an error when
// following: the lines come once serve writes them.
func Show(ctx context.Context, w io.Writer, path string, f Filter, follow bool, poll time.Duration) error {
	files := Files(path)
	if len(files) == 0 && !follow {
		return &os.PathError{Op: "open", Path: path, Err: os.ErrNotExist}
	}
	for _, name := range files {
		if name == path {
			break
		}
		if err := copyFile(w, name, f); err != nil {
			return err
		}
	}
	t := &tail{w: w, path: path, f: f}
	defer t.close()
	for {
		if err := t.read(); err != nil {
			return err
		}
		if !follow {
			return nil
		}
		timer := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
	}
}

func copyFile(w io.Writer, name string, f Filter) error {
	file, err := os.Open(name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // rotated away meanwhile
		}
		return err
	}
	defer file.Close()
	_, err = copyLines(w, bufio.NewReaderSize(file, 64<<10), f, nil)
	return err
}

// copyLines writes the whole lines of r that pass f to w and returns what
// is left of a last line with no newline yet (after partial, from before).
func copyLines(w io.Writer, r *bufio.Reader, f Filter, partial []byte) ([]byte, error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if len(partial)+len(chunk) <= maxLine {
			partial = append(partial, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return partial, nil
			}
			return partial, err
		}
		line := string(partial)
		partial = partial[:0]
		if f.Match(strings.TrimRight(line, "\r\n")) {
			if _, err := io.WriteString(w, line); err != nil {
				return nil, err
			}
		}
	}
}

// tail reads the current log file as it grows, and moves to the new one
// when it is rotated.
type tail struct {
	w       io.Writer
	path    string
	f       Filter
	file    *os.File
	r       *bufio.Reader
	partial []byte
}

// read writes what has been appended since the last read, and follows a
// rotation: the rest of the old file first, then the new one.
func (t *tail) read() error {
	for {
		if t.file == nil {
			file, err := os.Open(t.path)
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			t.file, t.r, t.partial = file, bufio.NewReaderSize(file, 64<<10), nil
		}
		var err error
		if t.partial, err = copyLines(t.w, t.r, t.f, t.partial); err != nil {
			return err
		}
		ours, err1 := t.file.Stat()
		cur, err2 := os.Stat(t.path)
		if err1 == nil && err2 == nil && os.SameFile(ours, cur) {
			return nil
		}
		if err2 != nil && !errors.Is(err2, os.ErrNotExist) {
			return err2
		}
		// Rotated (or removed): write what was appended to the old file
		// since, then go on with the new one.
		if _, err := copyLines(t.w, t.r, t.f, t.partial); err != nil {
			return err
		}
		t.close()
		if err2 != nil {
			return nil
		}
	}
}

func (t *tail) close() {
	if t.file != nil {
		t.file.Close()
		t.file = nil
	}
}
