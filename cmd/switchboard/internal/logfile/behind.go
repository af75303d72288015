package logfile

import (
	"io"
	"sync"
)

// Behind is an io.Writer that writes behind its callers: Write copies the
// bytes and returns, and one goroutine writes all that has gathered since
// its last write to the underlying writer in one write. A log line then
// costs the goroutine that logs it a copy, not a system call (or two, for
// a log file that checks its size): serve logs every call, and that write,
// on the call's path, was a tenth of its CPU under load (docs/bench.md).
// Under load many lines go in one write.
//
// Nothing is dropped: what gathers is bounded by max bytes, past which
// Write waits for the goroutine, as it would have waited for a slow writer
// itself. Flush waits until everything written so far has been written
// through; Close flushes and stops the goroutine. Writes are passed on in
// the order they were made, each whole: a writer that takes whole lines
// (slog's handlers write one record a Write) gets whole lines.
//
// A write error of the underlying writer is kept and returned by the next
// Write, Flush or Close, once.
type Behind struct {
	w   io.Writer
	max int

	mu      sync.Mutex
	cond    *sync.Cond // signalled when a write through ends, and at Close
	buf     []byte     // gathered, not yet handed over
	spare   []byte     // the buffer being written, then reused
	queued  uint64     // writes accepted
	written uint64     // writes passed on
	err     error
	closed  bool
	kick    chan struct{}
	done    chan struct{}
}

// DefaultBehindBytes is the bound on what gathers before Write waits.
const DefaultBehindBytes = 256 << 10

// NewBehind starts writing behind w; max <= 0 means DefaultBehindBytes.
func NewBehind(w io.Writer, max int) *Behind {
	if max <= 0 {
		max = DefaultBehindBytes
	}
	b := &Behind{w: w, max: max, kick: make(chan struct{}, 1), done: make(chan struct{})}
	b.cond = sync.NewCond(&b.mu)
	go b.loop()
	return b
}

// Write gathers p to be written and returns at once, unless max bytes are
// waiting already: then it waits for them to be written first. After
// Close, it writes p itself.
func (b *Behind) Write(p []byte) (int, error) {
	b.mu.Lock()
	for !b.closed && len(b.buf) > 0 && len(b.buf)+len(p) > b.max {
		b.cond.Wait()
	}
	if b.closed {
		b.mu.Unlock()
		<-b.done // what gathered before goes first
		return b.w.Write(p)
	}
	if err := b.err; err != nil {
		b.err = nil
		b.mu.Unlock()
		return 0, err
	}
	first := len(b.buf) == 0
	b.buf = append(b.buf, p...)
	b.queued++
	b.mu.Unlock()
	if first {
		select {
		case b.kick <- struct{}{}:
		default: // the goroutine has been told already
		}
	}
	return len(p), nil
}

func (b *Behind) loop() {
	defer close(b.done)
	for range b.kick {
		b.mu.Lock()
		for len(b.buf) > 0 {
			out, upTo := b.buf, b.queued
			b.buf, b.spare = b.spare[:0], nil
			b.mu.Unlock()
			_, err := b.w.Write(out)
			b.mu.Lock()
			if err != nil && b.err == nil {
				b.err = err
			}
			if cap(out) <= b.max { // keep one buffer of a sensible size
				b.spare = out[:0]
			}
			b.written = upTo
			b.cond.Broadcast()
		}
		closed := b.closed
		b.mu.Unlock()
		if closed {
			return
		}
	}
}

// Flush waits until every Write made before it has been written through,
// and returns a write error not yet returned.
func (b *Behind) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for want := b.queued; b.written < want; {
		b.cond.Wait()
	}
	err := b.err
	b.err = nil
	return err
}

// Close writes what has gathered and stops the goroutine; later writes go
// straight through. It does not close the underlying writer. It is
// idempotent.
func (b *Behind) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.cond.Broadcast() // writers waiting for room write through themselves
	b.mu.Unlock()
	select {
	case b.kick <- struct{}{}:
	default:
	}
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.err
	b.err = nil
	return err
}
