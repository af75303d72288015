package panel

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"
)

// TestPaletteEscapes: the palette writes the 16 basic colours and bold,
// faint and reverse as SGR sequences, each line on its own; without
// colour only the attributes; without escapes the text as it is.
func TestPaletteEscapes(t *testing.T) {
	for _, tc := range []struct {
		name           string
		color, escapes bool
		got            func(Palette) string
		want           string
	}{
		{"bad", true, true, func(p Palette) string { return p.Bad("failed") }, "\x1b[31mfailed\x1b[0m"},
		{"title", true, true, func(p Palette) string { return p.Title("panel") }, "\x1b[1;36mpanel\x1b[0m"},
		{"lines", true, true, func(p Palette) string { return p.Warn("a\n\nb") }, "\x1b[33ma\x1b[0m\n\n\x1b[33mb\x1b[0m"},
		{"no colour bad", false, true, func(p Palette) string { return p.Bad("failed") }, "\x1b[1mfailed\x1b[0m"},
		{"no colour ok", false, true, func(p Palette) string { return p.OK("ok") }, "ok"},
		{"selected", false, true, func(p Palette) string { return p.Selected("row") }, "\x1b[7mrow\x1b[0m"},
		{"no escapes", true, false, func(p Palette) string { return p.Bad("failed") + p.Dim("idle") }, "failedidle"},
	} {
		if got := tc.got(NewPalette(tc.color, tc.escapes)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestScroller: a line or a screenful at a time, never past either end;
// lines cut and padded to the width, blank lines to the height.
func TestScroller(t *testing.T) {
	var s scroller
	s.setSize(4, 2)
	s.setContent("one\ntwo\nthree-long\nfour\nfive")
	step := func(k string, want ...string) {
		t.Helper()
		s.key(k)
		if diff := cmp.Diff(want, s.view()); diff != "" {
			t.Errorf("after %q (-want +got):\n%s", k, diff)
		}
	}
	step("up", "one ", "two ")
	step("down", "two ", "thre")
	step("space", "four", "five")
	step("pgdown", "four", "five")
	step("j", "four", "five")
	step("pgup", "two ", "thre")
	step("k", "one ", "two ")
	s.setSize(5, 7)
	step("", "one  ", "two  ", "three", "four ", "five ", "     ", "     ")
	s.setContent("\tx")
	step("", "    x", "     ", "     ", "     ", "     ", "     ", "     ")
}

// TestSearchSlash: "/", the key that opens the search, is not typed into
// it; pasted text is, with its line breaks as spaces.
func TestSearchSlash(t *testing.T) {
	f := newFixture(t, nil)
	m := New(t.Context(), f.local, Options{Home: f.home, Refresh: -1})
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 10})
	m.Update(tea.KeyPressMsg{Code: '2', Text: "2"})
	if !m.search.Focused() {
		t.Fatal("the tools screen did not focus the search")
	}
	for _, r := range "/sum/" {
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	m.Update(tea.PasteMsg{Content: " two\nnumbers"})
	if got, want := m.search.Value(), "sum two numbers"; got != want {
		t.Errorf("search field holds %q, want %q", got, want)
	}
	if !strings.Contains(m.View().Content, "search: sum two numbers") {
		t.Errorf("the screen does not show the search:\n%s", m.View().Content)
	}
}

// TestInputKeys: the search and the form's fields edit with the usual
// line-editing keys; a modified key types nothing; the limit holds.
func TestInputKeys(t *testing.T) {
	press := func(in *input, ks ...string) {
		for _, k := range ks {
			var msg tea.KeyPressMsg
			switch k {
			case "left":
				msg = tea.KeyPressMsg{Code: tea.KeyLeft}
			case "home":
				msg = tea.KeyPressMsg{Code: tea.KeyHome}
			case "backspace":
				msg = tea.KeyPressMsg{Code: tea.KeyBackspace}
			case "ctrl+w", "ctrl+u", "ctrl+k", "ctrl+a", "ctrl+e", "ctrl+x":
				msg = tea.KeyPressMsg{Code: rune(k[5]), Mod: tea.ModCtrl}
			case "alt+b", "alt+d":
				msg = tea.KeyPressMsg{Code: rune(k[4]), Mod: tea.ModAlt}
			default:
				for _, r := range k {
					in.update(tea.KeyPressMsg{Code: r, Text: string(r)})
				}
				continue
			}
			in.update(msg)
		}
	}
	for _, tc := range []struct {
		keys []string
		want string
	}{
		{[]string{"one two", "ctrl+w"}, "one "},
		{[]string{"one two", "alt+b", "ctrl+k"}, "one "},
		{[]string{"one two", "alt+b", "ctrl+u"}, "two"},
		{[]string{"one two", "ctrl+a", "alt+d"}, " two"},
		{[]string{"one", "home", "x", "ctrl+e", "y"}, "xoney"},
		{[]string{"abc", "left", "backspace"}, "ac"},
		{[]string{"ab", "ctrl+x"}, "ab"},
		{[]string{"abcdefgh"}, "abcdefg"}, // the limit
	} {
		in := input{limit: 7, width: 10}
		in.Focus()
		press(&in, tc.keys...)
		if got := in.Value(); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.keys, got, tc.want)
		}
	}
	blurred := input{width: 10}
	press(&blurred, "abc")
	if blurred.Value() != "" {
		t.Errorf("a field without the focus took keys: %q", blurred.Value())
	}
}

// TestPlural: counts read as English: "3 matches", not "3 matchs" (issue 30).
func TestPlural(t *testing.T) {
	for _, tt := range []struct {
		n    int
		one  string
		want string
	}{
		{0, "tool", "0 tools"},
		{1, "tool", "1 tool"},
		{2, "match", "2 matches"},
		{1, "match", "1 match"},
		{3, "prefix", "3 prefixes"},
		{2, "class", "2 classes"},
		{2, "resource", "2 resources"},
	} {
		if got := plural(tt.n, tt.one); got != tt.want {
			t.Errorf("plural(%d, %q) = %q, want %q", tt.n, tt.one, got, tt.want)
		}
	}
}
