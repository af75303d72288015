package redact

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestSet(t *testing.T) {
	var s Set
	if got := s.String("nothing known"); got != "nothing known" {
		t.Errorf("empty set: %q", got)
	}
	s.Add("tok-123")
	s.Add("Bearer tok-123")
	s.Add("a<b&c d")
	s.Add("abc") // too short to replace
	s.AddAs("https://h/mcp?key=sk-999", "https://h/mcp")
	s.AddAs("tok-123", "other") // added before: keeps its replacement
	tests := []struct{ in, want string }{
		{"auth: Bearer tok-123.", "auth: [redacted]."},
		{"tok-123tok-123", "[redacted][redacted]"},
		{"abc stays", "abc stays"},
		{`{"v":"a\u003cb\u0026c d"}`, `{"v":"[redacted]"}`},
		{`{"v":"a<b&c d"}`, `{"v":"[redacted]"}`},
		{"q=a%3Cb%26c+d", "q=[redacted]"},
		{"GET https://h/mcp?key=sk-999 failed", "GET https://h/mcp failed"},
	}
	for _, tt := range tests {
		if got := s.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := string(s.Bytes([]byte(tt.in))); got != tt.want {
			t.Errorf("Bytes(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	var nilSet *Set
	nilSet.Add("tok-123")
	if got := nilSet.String("tok-123"); got != "tok-123" {
		t.Errorf("nil set: %q", got)
	}
}

// TestSetBound: the oldest values go once the set is full.
func TestSetBound(t *testing.T) {
	var s Set
	for i := range maxValues + 10 {
		s.Add(fmt.Sprintf("secret-%05d", i))
	}
	if got := s.String("secret-00000"); got != "secret-00000" {
		t.Errorf("the oldest value is still replaced: %q", got)
	}
	if got := s.String(fmt.Sprintf("secret-%05d", maxValues+9)); got != Replacement {
		t.Errorf("the newest value is not replaced: %q", got)
	}
}

func TestHandler(t *testing.T) {
	var s Set
	var out bytes.Buffer
	log := slog.New(Handler(&s, slog.NewTextHandler(&out, nil)))
	s.Add("canary-secret")
	log = log.With("early", "with canary-secret")
	log.Info("leaked canary-secret here",
		"line", "NAME=canary-secret",
		"err", errors.New("dial: canary-secret refused"),
		"n", 3,
		slog.Group("g", "inner", "canary-secret"),
		"any", []string{"canary-secret"})
	if got := out.String(); strings.Contains(got, "canary-secret") || strings.Count(got, Replacement) != 6 || !strings.Contains(got, "n=3") {
		t.Errorf("logged %q: want every value replaced, the rest kept", got)
	}
	if h := Handler(&s, Handler(&s, slog.DiscardHandler)); h.(*handler).h != slog.DiscardHandler {
		t.Error("a handler wrapped twice by the same set")
	}
}

// TestLineWriter: a value split across writes, or at the cut of a line
// too long to hold, is replaced all the same.
func TestLineWriter(t *testing.T) {
	var s Set
	secret := "canary-" + strings.Repeat("s", 40)
	s.Add(secret)
	var out bytes.Buffer
	w := NewLineWriter(&s, &out)
	text := "start " + secret + " end\n" + strings.Repeat("x", bufLines-10) + secret + strings.Repeat("y", 3*bufLines) + secret + "\nlast " + secret[:10]
	for i := 0; i < len(text); i += 7 { // in pieces that split the value
		w.Write([]byte(text[i:min(i+7, len(text))]))
	}
	w.Write([]byte(secret[10:]))
	w.Flush()
	want := strings.ReplaceAll(text+secret[10:], secret, Replacement)
	if got := out.String(); got != want {
		t.Errorf("wrote %d bytes with %d values left, want %d bytes with none", len(got), strings.Count(got, secret), len(want))
	}
}
