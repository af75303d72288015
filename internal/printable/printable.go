// Package printable cuts text that came from a server (an error code, a
// scope, an issuer, a host) down to what may be shown in a message: a
// bounded number of runes, none of which moves the cursor, rings the bell
// or starts an escape sequence on a terminal, or breaks the line.
package printable

import (
	"strings"
	"unicode"
)

// Clip keeps at most n runes of s, without control characters (C0, DEL
// and C1, which holds the one-byte CSI) or the Unicode line and paragraph
// separators, and marks a cut with "…". Other characters stay: quoted with
// %q, those that are not printable show as escapes, which tells more than
// leaving them out.
func Clip(s string, n int) string {
	var b strings.Builder
	for i, r := range []rune(s) {
		if i == n {
			b.WriteString("…")
			break
		}
		if !unicode.IsControl(r) && r != '\u2028' && r != '\u2029' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
