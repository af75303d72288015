package handoff

import (
	"context"
	"errors"
	"net/url"
	"testing"
)

// TestHandoff: a Handoff refuses a redirect before the login has its URL,
// and any redirect but the login's own callback with its state; it hands
// over one redirect, the code alone as the callback would carry it, and
// no second one. What it refuses leaves the login waiting.
func TestHandoff(t *testing.T) {
	const authURL = "https://as.example/authorize?client_id=c&redirect_uri=http%3A%2F%2F127.0.0.1%3A4567%2Fcallback&state=S0123456789abcdef"
	h := New()
	if err := h.Complete("http://127.0.0.1:4567/callback?code=x&state=S0123456789abcdef"); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("Complete before the URL = %v, want ErrNotStarted", err)
	}
	if err := h.CompleteCode("x"); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("CompleteCode before the URL = %v, want ErrNotStarted", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pasted := make(chan string, 1)
	go func() {
		p, _ := h.Prompt(ctx, "api", authURL)
		pasted <- p
	}()
	got, cb, err := h.URL(t.Context(), nil)
	if err != nil || got != authURL || cb != "http://127.0.0.1:4567/callback" {
		t.Fatalf("URL = %q, %q, %v", got, cb, err)
	}
	for _, bad := range []struct {
		redirect string
		want     error
	}{
		{"http://127.0.0.1:4567/callback?code=x&state=other", ErrStateMismatch},
		{"http://127.0.0.1:4567/callback?code=x", ErrStateMismatch},
		{"http://127.0.0.1:4568/callback?code=x&state=S0123456789abcdef", ErrForeignRedirect},
		{"http://evil.example:4567/callback?code=x&state=S0123456789abcdef", ErrForeignRedirect},
		{"http://127.0.0.1:4567/callback/x?code=x&state=S0123456789abcdef", ErrForeignRedirect},
		{"https://127.0.0.1:4567/callback?code=x&state=S0123456789abcdef", ErrForeignRedirect},
	} {
		if err := h.Complete(bad.redirect); !errors.Is(err, bad.want) {
			t.Errorf("Complete(%s) = %v, want %v", bad.redirect, err, bad.want)
		}
	}
	if h.Given() {
		t.Fatal("a refused redirect was handed over")
	}
	if err := h.CompleteCode("the code&more"); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(<-pasted)
	if err != nil || u.Host != "127.0.0.1:4567" || u.Path != "/callback" || u.Query().Get("code") != "the code&more" || u.Query().Get("state") != "S0123456789abcdef" {
		t.Errorf("handed over %v, %v", u, err)
	}
	if err := h.Complete("http://127.0.0.1:4567/callback?code=x&state=S0123456789abcdef"); !errors.Is(err, ErrAlreadyGiven) {
		t.Errorf("a second redirect = %v, want ErrAlreadyGiven", err)
	}
	if s := h.Secrets(); len(s) != 1 || s[0] != "S0123456789abcdef" {
		t.Errorf("Secrets = %v", s)
	}
}
