package proxy

import (
	"strings"
	"testing"
)

func TestBrief(t *testing.T) {
	long := strings.Repeat("x", 50)
	cut := strings.Repeat("x", 19) + "…"
	for _, tt := range []struct{ in, want string }{
		{"short", "short"},
		{"two\n  lines\n", "two lines"},
		{long, cut},
		{long + " (hint: export A before starting switchboard)", cut + " (hint: export A before starting switchboard)"},
		{long + "; hint: give it credentials", cut + " hint: give it credentials"},
		{"failed\nhint: switchboard config validate", "failed hint: switchboard config validate"},
	} {
		if got := brief(tt.in, 20); got != tt.want {
			t.Errorf("brief(%q, 20) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
