package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// AuthStatus is what is known of one HTTP server's OAuth login, without a
// secret: never a token.
type AuthStatus struct {
	Server string `json:"server"`
	// OAuth says whether the server may log in with OAuth; Reason says why
	// not, when it may not.
	OAuth  bool   `json:"oauth"`
	Reason string `json:"reason,omitempty"`
	// Store is where its tokens are: "file" or "keychain".
	Store string `json:"store"`
	// LoggedIn says whether a token is stored for the server's current URL
	// and client; the fields below describe it.
	LoggedIn    bool      `json:"loggedIn"`
	Grant       string    `json:"grant,omitempty"`
	Issuer      string    `json:"issuer,omitempty"`
	ClientID    string    `json:"clientId,omitempty"`
	Scopes      []string  `json:"scopes,omitempty"`
	Expiry      time.Time `json:"expiry,omitzero"`
	Refreshable bool      `json:"refreshable,omitempty"`
	ObtainedAt  time.Time `json:"obtainedAt,omitzero"`
}

// AuthStatus returns the OAuth status of every configured HTTP server, by
// name. It reads the store and resolves each server's URL, and connects
// nothing.
func (e *Engine) AuthStatus(ctx context.Context) ([]AuthStatus, error) {
	var out []AuthStatus
	for _, s := range e.cfg.Servers {
		if s.Type == config.TransportStdio || s.Type == config.TransportSocket || s.Type == config.TransportInProcess {
			continue
		}
		st := AuthStatus{Server: s.Name, OAuth: s.OAuthEnabled() && e.opts.Credentials != nil, Store: "none"}
		if e.opts.Credentials != nil {
			st.Store = e.opts.Credentials.Name()
		}
		if !st.OAuth {
			st.Reason = noOAuthReason(s, e.opts.Credentials == nil)
			out = append(out, st)
			continue
		}
		res, err := s.Resolve(config.Lookup{Env: e.opts.Lookup, Secrets: e.opts.Credentials})
		if err != nil {
			st.Reason = err.Error()
			out = append(out, st)
			continue
		}
		stored, err := oauth.Lookup(e.opts.Credentials, upstream.OAuthConfig(s, res))
		if err != nil {
			return nil, fmt.Errorf("reading the credentials of %q: %w", s.Name, err)
		}
		if stored != nil {
			st.LoggedIn, st.Grant, st.Issuer, st.ClientID = true, stored.Grant, stored.Issuer, stored.ClientID
			st.Scopes, st.Expiry, st.Refreshable, st.ObtainedAt = stored.Scopes, stored.Expiry, stored.Refresh, stored.ObtainedAt
		}
		out = append(out, st)
	}
	return out, nil
}

// noOAuthReason says why an HTTP server does not log in with OAuth.
func noOAuthReason(s *config.Server, noStore bool) string {
	switch {
	case s.OAuth != nil && s.OAuth.Disabled:
		return `"oauth": false`
	case !s.OAuthEnabled():
		return "it sends its own Authorization header"
	case noStore:
		return "no credential store"
	}
	return ""
}

// ServeUsers makes the engine serve signed-in users (settings.identity):
// from now on, each user has their own connection to, and OAuth tokens
// for, every server whose credentials are per user
// (config.Server.UserCredentials), and a call uses its user's (the user
// its context carries, identity.From); a call of no user is refused
// there.
func (e *Engine) ServeUsers() { e.pool.SetUserCredentials(true) }

// Login logs the server in with OAuth, whatever is stored, taking the user
// to the authorization URL through prompt, and then connects it anew with
// the new token, which shows that the login works.
func (e *Engine) Login(ctx context.Context, server string, prompt oauth.Prompter) error {
	if err := e.usableServer(server); err != nil {
		return err
	}
	if err := e.pool.Login(ctx, server, prompt); err != nil {
		return err
	}
	return e.pool.Reconnect(ctx, server)
}

// Logout removes the server's tokens and client registrations from the
// store, revoking the tokens where the authorization server allows it, and
// disconnects nothing: a live connection fails at its next use. removed
// counts the tokens removed; revokeErr tells of revocations that failed.
func (e *Engine) Logout(ctx context.Context, server string) (removed int, revokeErr, err error) {
	s, ok := e.cfg.Server(server)
	if !ok {
		return 0, nil, fmt.Errorf("unknown server %q", server)
	}
	var secret string
	if res, err := s.Resolve(config.Lookup{Env: e.opts.Lookup, Secrets: e.opts.Credentials}); err == nil {
		secret = res.OAuthClientSecret.Reveal()
	}
	if e.opts.Credentials == nil {
		return 0, nil, errors.New("no credential store is configured: nothing is stored to log out of")
	}
	client := &http.Client{Timeout: 30 * time.Second}
	return oauth.Logout(ctx, e.opts.Credentials, server, secret, client)
}

// usableServer returns why the named server cannot be logged in, or nil.
func (e *Engine) usableServer(name string) error {
	s, ok := e.cfg.Server(name)
	switch {
	case e.cfg.Err() != nil:
		return e.cfg.Err()
	case !ok:
		return fmt.Errorf("unknown server %q", name)
	case s.Disabled:
		return fmt.Errorf("server %q is disabled; hint: switchboard enable %s", name, name)
	case s.Err != nil:
		return s.Err
	}
	return nil
}
