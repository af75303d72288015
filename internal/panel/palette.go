package panel

import (
	"charm.land/lipgloss/v2"
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
	p := Palette{
		on:    true,
		ok:    lipgloss.NewStyle(),
		warn:  lipgloss.NewStyle().Bold(true),
		bad:   lipgloss.NewStyle().Bold(true),
		dim:   lipgloss.NewStyle().Faint(true),
		head:  lipgloss.NewStyle().Bold(true),
		title: lipgloss.NewStyle().Bold(true),
		sel:   lipgloss.NewStyle().Reverse(true),
	}
	if color {
		p.ok = p.ok.Foreground(lipgloss.Green)
		p.warn = lipgloss.NewStyle().Foreground(lipgloss.Yellow)
		p.bad = lipgloss.NewStyle().Foreground(lipgloss.Red)
		p.title = p.title.Foreground(lipgloss.Cyan)
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
