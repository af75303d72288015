package panel

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// input is a one-line text field: the search and the call form's fields.
//
// It is the panel's own rather than bubbles' textinput, whose package links
// a clipboard library that searches $PATH for six programs in its package
// initialisation: in every command of the binary, not only the panel.
// Pasting comes from the terminal (bracketed paste, tea.PasteMsg), which
// reaches a terminal over SSH too.
//
// Its view is prompt, text and a cursor cell that does not blink, width+1
// cells in all; a text wider than the field scrolls to keep the cursor in
// view.
type input struct {
	prompt, placeholder string
	limit               int // in runes; 0: none
	width               int // cells of text, the cursor cell not counted

	value   []rune
	pos     int // the cursor, an index into value
	offset  int // the first rune shown
	focused bool
}

func (in *input) Value() string { return string(in.value) }

// SetValue replaces the text and puts the cursor after it.
func (in *input) SetValue(s string) {
	in.value = nil
	in.pos, in.offset = 0, 0
	in.insert(s)
}

func (in *input) Focused() bool { return in.focused }
func (in *input) Focus()        { in.focused = true }
func (in *input) Blur()         { in.focused = false }

// insert puts s at the cursor, control characters (a pasted newline or
// tab) as spaces, as far as the limit allows.
func (in *input) insert(s string) {
	var add []rune
	for _, r := range s {
		if unicode.IsControl(r) {
			r = ' '
		}
		add = append(add, r)
	}
	if in.limit > 0 {
		add = add[:max(0, min(len(add), in.limit-len(in.value)))]
	}
	in.value = append(in.value[:in.pos], append(add, in.value[in.pos:]...)...)
	in.pos += len(add)
}

// update handles a key or a paste while the field has the focus, and
// reports whether the text changed.
func (in *input) update(msg tea.Msg) bool {
	if !in.focused {
		return false
	}
	before := string(in.value)
	switch msg := msg.(type) {
	case tea.PasteMsg:
		in.insert(msg.Content)
	case tea.KeyPressMsg:
		in.key(msg)
	}
	return string(in.value) != before
}

func (in *input) key(k tea.KeyPressMsg) {
	switch k.String() {
	case "left", "ctrl+b":
		in.pos = max(0, in.pos-1)
	case "right", "ctrl+f":
		in.pos = min(len(in.value), in.pos+1)
	case "home", "ctrl+a":
		in.pos = 0
	case "end", "ctrl+e":
		in.pos = len(in.value)
	case "alt+left", "ctrl+left", "alt+b":
		in.pos = in.wordBack()
	case "alt+right", "ctrl+right", "alt+f":
		in.pos = in.wordForward()
	case "backspace", "ctrl+h":
		in.cut(max(0, in.pos-1), in.pos)
	case "delete", "ctrl+d":
		in.cut(in.pos, min(len(in.value), in.pos+1))
	case "ctrl+w", "alt+backspace":
		in.cut(in.wordBack(), in.pos)
	case "alt+d", "alt+delete":
		in.cut(in.pos, in.wordForward())
	case "ctrl+u":
		in.cut(0, in.pos)
	case "ctrl+k":
		in.cut(in.pos, len(in.value))
	default:
		if k.Text != "" && k.Mod&(tea.ModCtrl|tea.ModAlt|tea.ModMeta|tea.ModHyper|tea.ModSuper) == 0 {
			in.insert(k.Text)
		}
	}
}

// cut deletes value[from:to] and leaves the cursor at from.
func (in *input) cut(from, to int) {
	in.value = append(in.value[:from], in.value[to:]...)
	in.pos = from
}

// wordBack is where the word before the cursor starts.
func (in *input) wordBack() int {
	i := in.pos
	for i > 0 && unicode.IsSpace(in.value[i-1]) {
		i--
	}
	for i > 0 && !unicode.IsSpace(in.value[i-1]) {
		i--
	}
	return i
}

// wordForward is where the word after the cursor ends.
func (in *input) wordForward() int {
	i := in.pos
	for i < len(in.value) && unicode.IsSpace(in.value[i]) {
		i++
	}
	for i < len(in.value) && !unicode.IsSpace(in.value[i]) {
		i++
	}
	return i
}

// View renders the field in pal: the prompt, then width+1 cells.
func (in *input) View(pal Palette) string {
	var b strings.Builder
	b.WriteString(pal.Head(in.prompt))
	cursor := func(s string) string {
		if in.focused {
			return pal.Selected(s)
		}
		return s
	}
	if len(in.value) == 0 && in.placeholder != "" {
		ph := []rune(ansi.Truncate(in.placeholder, in.width+1, ""))
		b.WriteString(cursor(string(ph[0])))
		rest := string(ph[1:])
		b.WriteString(pal.Dim(rest + strings.Repeat(" ", max(0, in.width-ansi.StringWidth(rest)))))
		return b.String()
	}
	in.scroll()
	shown := 0
	for i := in.offset; i <= len(in.value); i++ {
		c := " " // the cell after the text, where the cursor rests at the end
		if i < len(in.value) {
			c = string(in.value[i])
		}
		w := max(1, ansi.StringWidth(c))
		if shown+w > in.width+1 {
			break
		}
		if i == in.pos {
			c = cursor(c)
		}
		b.WriteString(c)
		shown += w
	}
	b.WriteString(strings.Repeat(" ", max(0, in.width+1-shown)))
	return b.String()
}

// scroll moves the first rune shown so that the cursor is in view.
func (in *input) scroll() {
	in.pos = max(0, min(in.pos, len(in.value)))
	if in.pos < in.offset {
		in.offset = in.pos
	}
	for in.offset < in.pos && in.cells(in.offset, in.pos)+1 > in.width+1 {
		in.offset++
	}
}

// cells is how wide value[from:to] is on the screen.
func (in *input) cells(from, to int) int {
	return ansi.StringWidth(string(in.value[from:to]))
}
