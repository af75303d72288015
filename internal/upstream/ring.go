package upstream

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// stderrRingSize is how much of a child's stderr is kept.
const stderrRingSize = 8 << 10

// A ring keeps the last bytes written to it. It is safe for concurrent use.
type ring struct {
	wrote chan struct{} // has a value after a write not yet waited for

	mu   sync.Mutex
	seq  uint64 // bytes written so far
	buf  []byte // len(buf) == size once full
	next int    // where the next byte goes once full
	full bool
	size int
}

func newRing(size int) *ring {
	return &ring{size: size, buf: make([]byte, 0, size), wrote: make(chan struct{}, 1)}
}

// written returns how many bytes were ever written to the ring.
func (r *ring) written() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// Write keeps the tail of p. It never fails.
func (r *ring) Write(p []byte) (int, error) {
	n := len(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq += uint64(n)
	if n > 0 {
		select {
		case r.wrote <- struct{}{}:
		default:
		}
	}
	if len(p) >= r.size {
		p = p[len(p)-r.size:]
		r.buf = append(r.buf[:0], p...)
		r.next, r.full = 0, true
		return n, nil
	}
	if !r.full {
		if room := r.size - len(r.buf); len(p) <= room {
			r.buf = append(r.buf, p...)
			return n, nil
		} else {
			r.buf = append(r.buf, p[:room]...)
			p = p[room:]
			r.full = true
		}
	}
	for len(p) > 0 {
		c := copy(r.buf[r.next:], p)
		p = p[c:]
		r.next = (r.next + c) % r.size
	}
	return n, nil
}

// Bytes returns a copy of what the ring holds, oldest first.
func (r *ring) Bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return bytes.Clone(r.buf)
	}
	out := make([]byte, 0, r.size)
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}

// tail returns the last lines of what the ring holds, at most max bytes, as
// valid UTF-8 with surrounding space trimmed: the part of stderr that explains
// why a process failed.
func (r *ring) tail(max int) string {
	b := r.Bytes()
	if len(b) > max {
		b = b[len(b)-max:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
}

// maxStderrLine bounds one stderr line passed to Options.Stderr.
const maxStderrLine = 4 << 10

// A lineWriter splits what is written to it into lines and passes each,
// without its newline and cut at maxStderrLine, to f. It is used by one
// goroutine.
type lineWriter struct {
	f    func(string)
	buf  []byte
	over bool // the current line passed maxStderrLine: drop until newline
}

// newLineWriter returns a lineWriter for f, or nil when f is nil.
func newLineWriter(f func(string)) io.Writer {
	if f == nil {
		return nil
	}
	return &lineWriter{f: f}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !w.over {
			room := maxStderrLine - len(w.buf)
			if len(chunk) > room {
				chunk, w.over = chunk[:room], true
				w.f(strings.TrimRight(strings.ToValidUTF8(string(append(w.buf, chunk...)), "\uFFFD"), "\r"))
				w.buf = w.buf[:0]
			} else {
				w.buf = append(w.buf, chunk...)
			}
		}
		if i < 0 {
			break
		}
		if !w.over {
			w.f(strings.TrimRight(strings.ToValidUTF8(string(w.buf), "\uFFFD"), "\r"))
		}
		w.buf, w.over = w.buf[:0], false
		p = p[i+1:]
	}
	return n, nil
}
