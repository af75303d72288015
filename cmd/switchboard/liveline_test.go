package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCallProgressLine: a call's progress line is rewritten in place,
// erased when the call ends, and a notification that comes after shows
// nothing; plain, it is erased with spaces.
func TestCallProgressLine(t *testing.T) {
	for _, tt := range []struct {
		name  string
		plain bool
		want  string
	}{
		{"terminal", false, "\rget-sum: 1/2 50%\x1b[K\rget-sum: 2/2 100%\x1b[K\r\x1b[K"},
		{"NO_COLOR", true, "\rget-sum: 1/2 50%\rget-sum: 2/2 100%\r" + strings.Repeat(" ", 17) + "\r"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			p := &callProgress{line: liveLine{w: &b, plain: tt.plain}, what: "get-sum"}
			p.show("get-sum: 1/2 50%")
			p.show("get-sum: 2/2 100%")
			p.clear()
			p.show("get-sum: late")
			p.clear()
			if got := b.String(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
