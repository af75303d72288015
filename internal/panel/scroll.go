package panel

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// scroller shows a long text (a tool's description, a call's result) a
// screenful at a time.
//
// It is the panel's own rather than bubbles' viewport, whose package links
// lipgloss, which works out the colour profile of standard output in its
// package initialisation (reading the terminfo database, and running
// "tmux info" under tmux): in every command of the binary, not only the
// panel.
type scroller struct {
	width, height int
	lines         []string
	top           int // the first line shown
}

// setContent replaces the text and shows its top.
func (s *scroller) setContent(text string) {
	s.lines = strings.Split(strings.ReplaceAll(text, "\t", "    "), "\n")
	s.top = 0
}

// setSize fits the scroller to width × height cells.
func (s *scroller) setSize(width, height int) {
	s.width, s.height = max(1, width), max(1, height)
	s.top = s.clamp(s.top)
}

func (s *scroller) clamp(top int) int {
	return max(0, min(top, len(s.lines)-s.height))
}

// key scrolls on a key: a line with down, j, up and k, a screenful with
// pgdown, space and pgup.
func (s *scroller) key(k string) {
	switch k {
	case "down", "j":
		s.top = s.clamp(s.top + 1)
	case "up", "k":
		s.top = s.clamp(s.top - 1)
	case "pgdown", "space", " ":
		s.top = s.clamp(s.top + s.height)
	case "pgup":
		s.top = s.clamp(s.top - s.height)
	}
}

// view is the lines in view, each cut or padded to the width, as many as
// the height.
func (s *scroller) view() []string {
	out := make([]string, s.height)
	for i := range out {
		var l string
		if s.top+i < len(s.lines) {
			l = ansi.Cut(s.lines[s.top+i], 0, s.width)
		}
		out[i] = l + strings.Repeat(" ", max(0, s.width-ansi.StringWidth(l)))
	}
	return out
}
