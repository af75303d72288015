package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// OAuthConfig is the OAuth configuration of s, with its references res
// resolved: what a connection authorizes with, and what keys its tokens.
func OAuthConfig(s *config.Server, res *config.Resolved) oauth.Config {
	c := oauth.Config{Server: s.Name, URL: res.URL.Reveal()}
	if o := s.OAuth; o != nil {
		c.Grant, c.ClientID, c.ClientMetadataURL = o.Grant, o.ClientID, o.ClientMetadataURL
		c.Scopes, c.RedirectPort = o.Scopes, o.RedirectPort
		c.ClientSecret, c.ClientKey = res.OAuthClientSecret.Reveal(), res.OAuthClientKey.Reveal()
		c.Audience = o.Audience
	}
	return c
}

// oauthHandler returns the OAuth handler of a connection to endpoint, or
// nil when the server does not log in with OAuth (a stdio server, "oauth":
// false, its own Authorization header, or a pool without a store). A
// connection logs in by itself only through prompt; nil makes a server
// that needs a login fail with a *oauth.NeedsLoginError.
func (s *server) oauthHandler(res *config.Resolved, endpoint string, prompt oauth.Prompter) (*oauth.Handler, error) {
	o := &s.pool.opts
	if o.Credentials == nil || !s.cfg.OAuthEnabled() {
		return nil, nil
	}
	if s.user == "" && s.pool.perUser(s.cfg) {
		// The shared connection of a server whose credentials are per
		// user (an eager connect, a request of no user): it has none.
		return nil, withClass(ClassAuth, &oauth.NeedsLoginError{Server: s.cfg.Name, Reason: noUserReason})
	}
	cfg := OAuthConfig(s.cfg, res)
	cfg.URL = endpoint
	cfg.User = s.user // a user's own tokens, for a server with per-user credentials
	if s.userTok != nil {
		cfg.SubjectToken = s.userTok.get // token exchange: the user's own token to the gateway
	}
	h, err := oauth.New(cfg, &oauth.Options{
		Store:      o.Credentials,
		HTTPClient: &http.Client{Transport: o.HTTPTransport}, // without the server's headers: they are for the server alone
		Prompt:     forUser(prompt, s.user),
		Logger:     s.log,
		Waiting:    pauseTimeouts,
	})
	if err != nil {
		return nil, withClass(ClassConfig, err)
	}
	return h, nil
}

// authCause returns the error that says why authorization failed: an OAuth
// error in err's chain (a login is needed, or a step of authorizing
// failed), else fallback.
func authCause(err, fallback error) error {
	var nl *oauth.NeedsLoginError
	if errors.As(err, &nl) {
		return withClass(ClassAuth, nl)
	}
	var oe *oauth.Error
	if errors.As(err, &oe) {
		return withClass(ClassAuth, oe)
	}
	return fallback
}

// bearer sets the Authorization header of req from the handler's token, if
// it has one. It is the SSE transport's part of what go-sdk's Streamable
// transport does with an OAuthHandler.
func bearer(h *oauth.Handler, req *http.Request) error {
	ts, err := h.TokenSource(req.Context())
	if err != nil || ts == nil {
		return err
	}
	tok, err := ts.Token()
	if err != nil {
		if errors.Is(err, oauth.ErrNoToken) {
			return nil // sent without: its 401 says what to do
		}
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	return nil
}

// authRoundTrip sends req with the handler's token and, when the server
// answers 401 or 403, lets the handler authorize and sends it once more
// (SSE: go-sdk's SSE transport has no OAuthHandler).
func (t *httpTransport) authRoundTrip(req *http.Request) (*http.Response, error) {
	if err := bearer(t.auth, req); err != nil {
		return nil, err
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	retry := req.Clone(req.Context())
	if err := t.auth.Authorize(req.Context(), req, resp); err != nil {
		return nil, err
	}
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		retry.Body = body
	}
	retry.Header.Del("Authorization") // the refused token, unless a new one comes
	if err := bearer(t.auth, retry); err != nil {
		return nil, err
	}
	return t.base.RoundTrip(retry)
}

// Login logs the server in with OAuth, whatever is stored: it asks the
// server without a token and, when it asks for authorization, authorizes
// through prompt (discovery, registration, the browser, the token). A live
// connection picks the new token up when its old one is refused.
func (p *Pool) Login(ctx context.Context, name string, prompt oauth.Prompter) error {
	const op = "logging in"
	s, err := p.serverFor(ctx, name, op)
	if err != nil {
		return err
	}
	if err := s.usable(op); err != nil {
		return err
	}
	if why := s.noOAuth(); why != "" {
		return &Error{Server: name, Op: op, Class: ClassConfig, Err: errors.New(why)}
	}
	if why := s.cfg.Offline; why != "" {
		return &Error{Server: name, Op: op, Class: ClassConfig, Err: offlineError(why)}
	}
	res, err := s.cfg.Resolve(config.Lookup{Env: p.opts.Lookup, Secrets: p.opts.Credentials, Commands: commands(ctx)})
	if err != nil {
		return &Error{Server: name, Op: op, Class: ClassConfig, Err: err}
	}
	endpoint := res.URL.Reveal()
	h, err := s.oauthHandler(res, endpoint, prompt)
	if err != nil {
		return &Error{Server: name, Op: op, Class: ClassConfig, Err: err}
	}
	scrub := p.newScrubber(s.cfg, res)
	resp, err := s.probe(ctx, res, endpoint)
	if err != nil {
		return &Error{Server: name, Op: op, Class: ClassTransport, Err: scrub.error(err)}
	}
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden && (s.cfg.OAuth == nil || s.cfg.OAuth.Grant != config.GrantClientCredentials && s.cfg.OAuth.Grant != config.GrantTokenExchange) {
		resp.Body.Close()
		return &Error{Server: name, Op: op, Class: ClassConfig,
			Err: fmt.Errorf("the server answered HTTP %d to a request without a token: it does not ask for authorization", resp.StatusCode)}
	}
	if err := h.Login(ctx, resp); err != nil {
		return &Error{Server: name, Op: op, Class: ClassAuth, Err: scrub.error(err)}
	}
	return nil
}

// noOAuth says why the server cannot log in with OAuth, or "".
func (s *server) noOAuth() string {
	switch {
	case s.pool.opts.Credentials == nil:
		return "no credential store is configured"
	case s.cfg.Type == config.TransportStdio || s.cfg.Type == config.TransportSocket:
		return fmt.Sprintf("it is a %s server: OAuth is for HTTP servers", s.cfg.Type)
	case s.cfg.Type == config.TransportInProcess:
		return "it is packaged by the host: OAuth is for HTTP servers"
	case s.cfg.OAuth != nil && s.cfg.OAuth.Disabled:
		return `its definition says "oauth": false`
	case !s.cfg.OAuthEnabled():
		return "it sends an Authorization header of its own (see its headers)"
	}
	return ""
}

// probe asks the server without a token, the way a connection starts,
// with the server's headers, and returns the first answer that refuses
// authorization, else the last answer. Streamable HTTP: a POST of
// initialize and, since some servers let initialize through and guard the
// rest, then of tools/list in its session. SSE: the GET of the event
// stream. The caller closes the body.
func (s *server) probe(ctx context.Context, res *config.Resolved, endpoint string) (*http.Response, error) {
	o := &s.pool.opts
	// The connection's transport: the headers go to the server's origin
	// alone, and a redirect elsewhere is refused (see origin.go).
	rt, err := newHTTPTransport(o.HTTPTransport, endpoint, s.cfg.Redirects, res.Headers, 0, o.MaxMessageBytes, o.MaxReadBytes)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: rt, CheckRedirect: rt.checkRedirect}
	if s.transport() == config.TransportSSE {
		return probeOnce(ctx, client, endpoint, http.MethodGet, "", "")
	}
	resp, err := probeOnce(ctx, client, endpoint, http.MethodPost, "", probeInitialize)
	if err != nil || resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return resp, err
	}
	session := resp.Header.Get("Mcp-Session-Id")
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return probeOnce(ctx, client, endpoint, http.MethodPost, session, probeList)
}

const (
	probeInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"switchboard","version":"login"}}}`
	probeList       = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
)

func probeOnce(ctx context.Context, client *http.Client, endpoint, method, session, body string) (*http.Response, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, endpoint, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	return client.Do(req)
}
