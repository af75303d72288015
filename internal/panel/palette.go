package panel

import (
	"strings"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
)

// Palette is the few styles Switchboard colours text with, in the panel and
// in the command line's tables and errors: one place, so that "failed" is
// the same red everywhere. It uses the 16 basic colours, which every
// colour terminal has and the user's theme maps to its own: nothing here
// depends on the terminal's background, so nothing asks the terminal for
// it. Making a palette reads nothing and writes nothing.
//
// The zero value renders text as it is, with no escape sequence at all.
type Palette struct {
	on, color                       bool
	ok, warn, bad, dim, head, title ansi.Style
	sel                             ansi.Style
}

// NewPalette returns a palette. Without escapes (not a terminal, or
// TERM=dumb) it renders text as it is; with escapes but without color
// (NO_COLOR) it uses only bold, faint and reverse, so that the selection
// and failures still stand out; with both, the colours too.
func NewPalette(color, escapes bool) Palette {
	if !escapes {
		return Palette{}
	}
	p := Palette{
		on:    true,
		warn:  ansi.NewStyle().Bold(),
		bad:   ansi.NewStyle().Bold(),
		dim:   ansi.NewStyle().Faint(),
		head:  ansi.NewStyle().Bold(),
		title: ansi.NewStyle().Bold(),
		sel:   ansi.NewStyle().Reverse(true),
	}
	if color {
		p.color = true
		p.ok = ansi.NewStyle().ForegroundColor(ansi.Green)
		p.warn = ansi.NewStyle().ForegroundColor(ansi.Yellow)
		p.bad = ansi.NewStyle().ForegroundColor(ansi.Red)
		p.title = ansi.NewStyle().Bold().ForegroundColor(ansi.Cyan)
	}
	return p
}

// On reports whether the palette colours anything.
func (p Palette) On() bool { return p.on }

// profile is what the palette writes, for the panel's renderer: the 16
// basic colours, or attributes only. The panel does not ask the terminal
// or the terminfo database what it can show (bubbletea would, and run
// "tmux info" under tmux): the basic colours are what every colour
// terminal has, and NO_COLOR and TERM=dumb were decided when the palette
// was made.
func (p Palette) profile() colorprofile.Profile {
	if p.color {
		return colorprofile.ANSI
	}
	return colorprofile.ASCII
}

// render styles each line of text on its own, so that a line break does
// not carry the style into what the terminal shows next.
func (p Palette) render(s ansi.Style, text string) string {
	if !p.on || len(s) == 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = s.String() + l + "\x1b[0m"
		}
	}
	return strings.Join(lines, "\n")
}

// OK styles what went well (connected, ok).
func (p Palette) OK(s string) string { return p.render(p.ok, s) }

// Warn styles what needs attention (needs-auth, a warning).
func (p Palette) Warn(s string) string { return p.render(p.warn, s) }

// Bad styles what failed (failed, an error).
func (p Palette) Bad(s string) string { return p.render(p.bad, s) }

// Dim styles what matters less (idle, disabled, times).
func (p Palette) Dim(s string) string { return p.render(p.dim, s) }

// Head styles a table's header.
func (p Palette) Head(s string) string { return p.render(p.head, s) }

// Title styles the panel's title and the current tab.
func (p Palette) Title(s string) string { return p.render(p.title, s) }

// Selected styles the selected row.
func (p Palette) Selected(s string) string { return p.render(p.sel, s) }

// State styles a server's state by what it means.
func (p Palette) State(state string) string {
	switch state {
	case "connected", "enabled":
		return p.OK(state)
	case "failed", "invalid", "blocked":
		return p.Bad(state)
	case "needs-auth", "connecting":
		return p.Warn(state)
	case "idle", "disabled", "disconnected":
		return p.Dim(state)
	}
	return state
}
