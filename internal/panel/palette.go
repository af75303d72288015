package panel

import (
	"io"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Palette is the few styles Switchboard colours text with, in the panel and
// in the command line's tables and errors: one place, so that "failed" is
// the same red everywhere. It uses the 16 basic colours, which every
// colour terminal has and the user's theme maps to its own.
//
// The zero value renders text as it is, with no escape sequence at all.
type Palette struct {
	on                              bool
	ok, warn, bad, dim, head, title lipgloss.Style
	sel                             lipgloss.Style
}

// NewPalette returns a palette. Without escapes (not a terminal, or
// TERM=dumb) it renders text as it is; with escapes but without color
// (NO_COLOR) it uses only bold, faint and reverse, so that the selection
// and failures still stand out; with both, the colours too.
func NewPalette(color, escapes bool) Palette {
	if !escapes {
		return Palette{}
	}
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.ANSI)
	p := Palette{
		on:    true,
		ok:    r.NewStyle(),
		warn:  r.NewStyle().Bold(true),
		bad:   r.NewStyle().Bold(true),
		dim:   r.NewStyle().Faint(true),
		head:  r.NewStyle().Bold(true),
		title: r.NewStyle().Bold(true),
		sel:   r.NewStyle().Reverse(true),
	}
	if color {
		p.ok = p.ok.Foreground(lipgloss.Color("2"))
		p.warn = r.NewStyle().Foreground(lipgloss.Color("3"))
		p.bad = r.NewStyle().Foreground(lipgloss.Color("1"))
		p.title = p.title.Foreground(lipgloss.Color("6"))
	}
	return p
}

// On reports whether the palette colours anything.
func (p Palette) On() bool { return p.on }

func (p Palette) render(s lipgloss.Style, text string) string {
	if !p.on {
		return text
	}
	return s.Render(text)
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
