package upstream

import (
	"bytes"
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
