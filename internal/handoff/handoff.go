// Package handoff lets a client that cannot open a URL finish an OAuth
// login in two steps (the mcp tool's auth-start and auth-complete): it is
// the login's oauth.Prompter, gives out the authorization URL, and takes
// back the redirect the user pastes after checking it is the login's own.
package handoff

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/url"
	"sync"
)

// A Handoff is the oauth.Prompter of a login that a client finishes in two
// steps because it cannot open a URL itself (an MCP client without URL
// elicitation). The first step takes the authorization URL to show the
// user (URL). The user opens it and approves; then either the browser
// reaches the login's loopback listener, which ends the login by itself,
// or the user copies the redirect URL from the browser and the second step
// hands it to the login (Complete), after checking it is this login's.
//
// A Handoff serves one login. Its methods are safe for concurrent use.
type Handoff struct {
	url   chan string // the authorization URL; buffered, sent once
	paste chan string // the checked redirect; buffered, sent once

	mu       sync.Mutex
	state    string   // the login's state, from the authorization URL
	callback *url.URL // the login's redirect URI
	given    bool     // a redirect was handed over
}

// New returns a Handoff for one login.
func New() *Handoff {
	return &Handoff{url: make(chan string, 1), paste: make(chan string, 1)}
}

// Prompt is the Prompter of the login: it hands the authorization URL to
// URL, and waits for Complete, or for ctx to end (the loopback listener
// got the redirect, or the login gave up).
func (h *Handoff) Prompt(ctx context.Context, _ string, authURL string) (string, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return "", errors.New("the authorization URL does not parse")
	}
	q := u.Query()
	cb, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || q.Get("state") == "" {
		return "", errors.New("the authorization URL has no redirect_uri or state")
	}
	h.mu.Lock()
	if h.callback != nil {
		h.mu.Unlock()
		return "", errors.New("a handoff serves one login: this one has its URL already")
	}
	h.state, h.callback = q.Get("state"), cb
	h.mu.Unlock()
	h.url <- authURL
	select {
	case p := <-h.paste:
		return p, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// URL waits for the login's authorization URL and its callback (the
// redirect URI on the loopback listener), until done closes (the login
// ended without asking the user) or ctx ends.
func (h *Handoff) URL(ctx context.Context, done <-chan struct{}) (authURL, callback string, err error) {
	select {
	case u := <-h.url:
		h.mu.Lock()
		defer h.mu.Unlock()
		return u, h.callback.String(), nil
	case <-done:
		return "", "", errors.New("the login ended without an authorization URL")
	case <-ctx.Done():
		return "", "", ctx.Err()
	}
}

// Errors of Complete. Their text repeats nothing of what was pasted.
var (
	// ErrNotStarted: the login has not shown its authorization URL yet.
	ErrNotStarted = errors.New("the login has not given its authorization URL yet")
	// ErrForeignRedirect: the URL is not the login's loopback callback.
	ErrForeignRedirect = errors.New("it is not this login's callback: the redirect URL must start with the callback the login gave (same scheme, host, port and path)")
	// ErrStateMismatch: the URL's state is not the login's.
	ErrStateMismatch = errors.New("its state is not this login's: it is the redirect of another login, or was altered; paste the URL the browser was sent to after approving this login")
	// ErrAlreadyGiven: a redirect was handed to the login already.
	ErrAlreadyGiven = errors.New("a redirect was given to this login already")
)

// Complete checks a redirect URL the user pasted, and hands it to the
// login: it must be the login's own callback (scheme, host, port and
// path of the redirect URI) and carry the login's state. A URL refused
// here leaves the login waiting, for a right one or the browser.
func (h *Handoff) Complete(redirect string) error {
	u, err := url.Parse(redirect)
	if err != nil {
		return errors.New("it is not a URL")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.callback == nil:
		return ErrNotStarted
	case h.given:
		return ErrAlreadyGiven
	case u.Scheme != h.callback.Scheme || u.Host != h.callback.Host || u.Path != h.callback.Path || u.User != nil:
		return ErrForeignRedirect
	case subtle.ConstantTimeCompare([]byte(u.Query().Get("state")), []byte(h.state)) != 1:
		return ErrStateMismatch
	}
	return h.handLocked(redirect)
}

// CompleteCode hands the login an authorization code the user copied
// alone, as the redirect it came in would carry it, with the login's
// state. PKCE binds a code to the login that asked for it: a code of
// another login fails the exchange. An authorization server that sends
// the iss parameter (RFC 9207) needs the whole redirect URL instead.
func (h *Handoff) CompleteCode(code string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.callback == nil:
		return ErrNotStarted
	case h.given:
		return ErrAlreadyGiven
	}
	u := *h.callback
	u.RawQuery = url.Values{"code": {code}, "state": {h.state}}.Encode()
	return h.handLocked(u.String())
}

func (h *Handoff) handLocked(redirect string) error {
	h.given = true
	h.paste <- redirect // buffered: the login takes it, or has ended
	return nil
}

// Given reports whether a redirect was handed to the login.
func (h *Handoff) Given() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.given
}

// Secrets returns what of the login must not be written to logs, spans
// or audit records: its state. The caller adds it to its redaction set.
func (h *Handoff) Secrets() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == "" {
		return nil
	}
	return []string{h.state}
}
