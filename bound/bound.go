// Package bound keeps every model-visible result within limits: its text,
// images and structured content together (see Fit).
//
// What does not fit is spilled: a text goes whole to a file of mode 0600 in
// a per-process directory of mode 0700 and the result keeps a preview;
// images and structured content that do not fit go to files too; the
// result says where each is and why. A long-lived process removes its spill
// directory when it closes its Spiller, and a later start removes the
// directories of processes that died without doing so (see Clean). A
// short-lived one whose user reads the files after it exits, such as the
// CLI, releases its Spiller instead, and a later start removes directories
// once they are old (see Sweep).
package bound

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits bound one result. Zero fields take the defaults.
type Limits struct {
	MaxBytes int // default 50 KiB
	MaxLines int // default 2,000
}

// Defaults.
const (
	DefaultMaxBytes = 50 << 10
	DefaultMaxLines = 2000
)

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxLines <= 0 {
		l.MaxLines = DefaultMaxLines
	}
	return l
}

// Lines counts the lines of s: the pieces between newlines, where a final
// newline does not start another line.
func Lines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// Fits reports whether s is within the limits: at most MaxBytes bytes and at
// most MaxLines lines.
func (l Limits) Fits(s string) bool {
	l = l.withDefaults()
	return len(s) <= l.MaxBytes && Lines(s) <= l.MaxLines
}

// reason says which limit s exceeds, when the rest of its result takes
// reserve bytes.
func (l Limits) reason(s string, reserve int) string {
	l = l.withDefaults()
	var why []string
	switch {
	case len(s) > l.MaxBytes:
		why = append(why, fmt.Sprintf("%d bytes exceed the limit of %d", len(s), l.MaxBytes))
	case len(s)+reserve > l.MaxBytes:
		why = append(why, fmt.Sprintf("%d bytes, with the %d of the rest of the result, exceed the limit of %d", len(s), reserve, l.MaxBytes))
	}
	if n := Lines(s); n > l.MaxLines {
		why = append(why, fmt.Sprintf("%d lines exceed the limit of %d", n, l.MaxLines))
	}
	return strings.Join(why, " and ")
}

// Preview returns the longest prefix of s that has at most maxBytes bytes
// and maxLines lines and ends at a line boundary; a first line too long for
// the budget is cut at a character boundary instead.
func Preview(s string, maxBytes, maxLines int) string {
	cut := len(s) > maxBytes
	if cut {
		s = truncateUTF8(s, maxBytes)
	}
	end, lines := 0, 0
	for end < len(s) && lines < maxLines {
		i := strings.IndexByte(s[end:], '\n')
		if i < 0 { // the last line, maybe cut short
			if !cut || lines == 0 {
				end = len(s)
			}
			break
		}
		end += i + 1
		lines++
	}
	return s[:end]
}

// truncateUTF8 cuts s to at most n bytes without splitting a character.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for i := 0; i < utf8.UTFMax-1 && len(s) > 0; i++ {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size > 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}
