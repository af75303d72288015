package redact

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
)

// Handler returns a slog handler that passes h every record with the
// secret values of s replaced in its message and in its attributes'
// values: strings, errors and anything else printed with %v.
func Handler(s *Set, h slog.Handler) slog.Handler {
	if s == nil {
		return h
	}
	if rh, ok := h.(*handler); ok && rh.s == s {
		return h // already cleaned by s
	}
	return &handler{s: s, h: h}
}

type handler struct {
	s *Set
	h slog.Handler
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	if rp, _ := h.s.replacer(); rp == nil {
		return h.h.Handle(ctx, r)
	}
	clean := slog.NewRecord(r.Time, r.Level, h.s.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		clean.AddAttrs(h.attr(a))
		return true
	})
	return h.h.Handle(ctx, clean)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	// Attributes given now are cleaned with the values known now: a
	// logger made before a secret was resolved keeps what it was given.
	return &handler{s: h.s, h: h.h.WithAttrs(clean)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{s: h.s, h: h.h.WithGroup(name)}
}

// attr returns a with the secret values in its value replaced.
func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.String(v.String()))
	case slog.KindGroup:
		group := v.Group()
		clean := make([]any, len(group))
		for i, g := range group {
			clean[i] = h.attr(g)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		text := v.String() // an error's Error(), else %v
		if clean := h.s.String(text); clean != text {
			return slog.String(a.Key, clean)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// A LineWriter passes what is written to it on to w a line at a time,
// with the secret values of its Set replaced: a value split across two
// writes is replaced all the same. A line longer than bufLines is passed
// on in parts, each cut where no value can straddle it. Flush passes on
// the last, unfinished line. It is not safe for concurrent use.
type LineWriter struct {
	s   *Set
	w   io.Writer
	buf []byte
}

// bufLines bounds the unfinished line a LineWriter holds.
const bufLines = 16 << 10

// NewLineWriter returns a LineWriter that writes to w.
func NewLineWriter(s *Set, w io.Writer) *LineWriter { return &LineWriter{s: s, w: w} }

// Write never fails: what w returns is dropped, as a log sink's would be.
func (l *LineWriter) Write(p []byte) (int, error) {
	n := len(p)
	l.buf = append(l.buf, p...)
	if i := bytes.LastIndexByte(l.buf, '\n'); i >= 0 {
		l.emit(l.buf[:i+1])
		l.buf = append(l.buf[:0], l.buf[i+1:]...)
	}
	if len(l.buf) > bufLines {
		cut := l.safeCut()
		l.emit(l.buf[:cut])
		l.buf = append(l.buf[:0], l.buf[cut:]...)
	}
	return n, nil
}

// Flush passes on what is held.
func (l *LineWriter) Flush() {
	if len(l.buf) > 0 {
		l.emit(l.buf)
		l.buf = l.buf[:0]
	}
}

func (l *LineWriter) emit(b []byte) { _, _ = l.w.Write(l.s.Bytes(b)) }

// safeCut returns where the held text may be cut: as late as possible
// while every value that starts before the cut also ends before it. A
// value that starts in the last maxLen-1 bytes may go on in the next
// write; one that starts earlier and crosses that point moves the cut
// back to its start.
func (l *LineWriter) safeCut() int {
	_, maxLen := l.s.replacer()
	cut := len(l.buf) - max(maxLen-1, 0)
	if maxLen == 0 {
		return cut
	}
	l.s.mu.Lock()
	values := slices.Clone(l.s.order)
	l.s.mu.Unlock()
	for moved := true; moved && cut > 0; {
		moved = false
		for _, v := range values {
			lo := max(cut-len(v)+1, 0)
			if i := strings.Index(string(l.buf[lo:min(cut+len(v)-1, len(l.buf))]), v); i >= 0 && lo+i < cut {
				cut, moved = lo+i, true
			}
		}
	}
	if cut <= 0 {
		return len(l.buf) // a value as long as the buffer: no better cut
	}
	return cut
}
