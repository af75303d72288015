package proxy

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Headline returns the first non-empty line of s, at most n characters.
func Headline(s string, n int) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		return shorten(line, n)
	}
	return ""
}

// shorten cuts s to at most n characters, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// brief puts an error message on one line of at most n characters before
// its hint, which is kept whole (up to a bound): it says what to do.
func brief(msg string, n int) string {
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	flat := strings.Join(parts, " ")
	i := strings.Index(flat, "hint: ")
	if i < 0 {
		return shorten(flat, n)
	}
	if i > 0 && flat[i-1] == '(' {
		i--
	}
	body, hint := strings.TrimSpace(flat[:i]), flat[i:]
	return shorten(body, n) + " " + shorten(hint, 400)
}

func dashed(s string) string {
	if s == "" {
		return ""
	}
	return " — " + s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// schemaJSON is a schema as the audience reads it after its label: for
// people, JSON indented by two spaces on lines of its own; for agents,
// compact JSON on the label's line, which costs a model fewer tokens.
func (a Audience) schemaJSON(v any) string {
	if a != People || v == nil {
		return " " + compactJSON(v)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return "\n" + string(b)
}

func compactJSON(v any) string {
	if v == nil {
		return "{}"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}
