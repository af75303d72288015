package jsonc

import (
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

func TestParsePosition(t *testing.T) {
	for _, tt := range []struct {
		text            string
		line, col       int
		want, forbidden string
	}{
		{"{\n  \"a\": ,\n}", 2, 8, "invalid character", ""},
		{"{\"a\": \"sk-live-0123\n456\"}", 1, 7, "the text is not shown", "sk-live"},
		{strings.Repeat("[", MaxDepth+1), 1, MaxDepth + 1, "nest deeper than 1000 levels", ""},
	} {
		_, err := Parse([]byte(tt.text))
		if err == nil {
			t.Fatalf("Parse(%.20q): no error", tt.text)
		}
		line, col, msg := Position(err)
		if line != tt.line || col != tt.col || !strings.Contains(msg, tt.want) || strings.HasPrefix(msg, "line") ||
			(tt.forbidden != "" && strings.Contains(msg, tt.forbidden)) {
			t.Errorf("Parse(%.20q): got %d:%d %q, want %d:%d with %q, without the position in the message or %q",
				tt.text, line, col, msg, tt.line, tt.col, tt.want, tt.forbidden)
		}
	}
}

// TestEditKeepsTheRest sets and removes members: a removed member's
// comments (the lines above it, the tail of its line) go with it, and
// everything else stays as it was.
func TestEditKeepsTheRest(t *testing.T) {
	const in = "{ // top\n  // a's comment\n  \"a\": {\"x\": 1}, // first\n  \"b\": {\"y\": 2},\n}\n"
	v, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	obj := v.Value.(*hujson.Object)
	if !RemoveMember(obj, "a") || RemoveMember(obj, "zz") {
		t.Fatal("RemoveMember: wrong report of what it removed")
	}
	b := obj.Members[MemberIndex(obj, "b")].Value.Value.(*hujson.Object)
	if err := SetMember(b, "off", true, IndentOf(&obj.Members[0])); err != nil {
		t.Fatal(err)
	}
	const want = "{ // top\n  \"b\": {\"y\": 2, \"off\": true},\n}\n"
	if got := string(v.Pack()); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
