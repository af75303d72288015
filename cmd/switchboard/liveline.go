package main

// The live line of progress on a terminal, rewritten in place and erased
// before a result prints: index's ("indexing 3/10: github, slack…",
// cmd_index.go) and a call's progress notifications (callprogress.go).

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// progressWidth bounds the line, so it never wraps on an 80-column terminal.
const progressWidth = 78

// liveLine is a line rewritten in place on a terminal. Its owner
// serializes show and clear.
type liveLine struct {
	w     io.Writer
	plain bool // no escape sequences: erase with spaces
	shown int  // runes of the line on screen
}

// show writes line, cut to progressWidth, in place of the one shown.
func (l *liveLine) show(line string) {
	if utf8.RuneCountInString(line) > progressWidth {
		line = string([]rune(line)[:progressWidth-1]) + "…"
	}
	n := utf8.RuneCountInString(line)
	if l.plain {
		fmt.Fprintf(l.w, "\r%s%s", line, strings.Repeat(" ", max(0, l.shown-n)))
	} else {
		fmt.Fprintf(l.w, "\r%s\x1b[K", line)
	}
	l.shown = n
}

// clear erases the line shown, if any, leaving the cursor at its start.
func (l *liveLine) clear() {
	if l.shown == 0 {
		return
	}
	if l.plain {
		fmt.Fprintf(l.w, "\r%s\r", strings.Repeat(" ", l.shown))
	} else {
		fmt.Fprint(l.w, "\r\x1b[K")
	}
	l.shown = 0
}
