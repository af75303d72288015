package switchboard

import (
	"context"
	"time"

	"github.com/switchboard-mcp/switchboard/oauth"
)

// AuthStatus is what is known of one HTTP server's OAuth login, without a
// secret: never a token.
type AuthStatus struct {
	Server string `json:"server"`
	// OAuth says whether the server may log in with OAuth; Reason says why
	// not, when it may not (it sends its own Authorization header, its
	// configuration says "oauth": false, there is no credential store), or
	// why its login is unknown (a reference that does not resolve).
	OAuth  bool   `json:"oauth"`
	Reason string `json:"reason,omitempty"`
	// Store is where its tokens are kept: the name of Options.Credentials
	// ("file", "keychain", "postgres"), or "none".
	Store string `json:"store"`
	// LoggedIn says whether a token is stored for the server's current URL
	// and client; the fields below describe it.
	LoggedIn    bool      `json:"loggedIn"`
	Grant       string    `json:"grant,omitempty"` // "authorization_code" or "client_credentials"
	Issuer      string    `json:"issuer,omitempty"`
	ClientID    string    `json:"clientId,omitempty"`
	Scopes      []string  `json:"scopes,omitempty"`
	Expiry      time.Time `json:"expiry,omitzero"`
	Refreshable bool      `json:"refreshable,omitempty"` // refreshed before Expiry, without the user
	ObtainedAt  time.Time `json:"obtainedAt,omitzero"`
}

// AuthStatus returns the OAuth login of every configured HTTP server, in
// the order of their names, for a host that shows its user which servers
// are logged in and until when. It reads Options.Credentials and resolves
// each server's URL; it connects nothing.
func (e *Engine) AuthStatus(ctx context.Context) ([]AuthStatus, error) {
	all, err := e.core.AuthStatus(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]AuthStatus, len(all))
	for i, st := range all {
		out[i] = AuthStatus(st)
	}
	return out, nil
}

// Login logs a remote server in with OAuth now, whatever is stored, for a
// host whose user asks to (a "log in" button): prompt takes the user to
// the authorization URL, as Options.Prompt does for a login an operation
// needs. Once the browser brings the redirect to a loopback listener and
// the token is stored in Options.Credentials, Login connects the server
// anew with it, which shows that the login works.
func (e *Engine) Login(ctx context.Context, server string, prompt oauth.Prompter) error {
	return e.core.Login(ctx, server, prompt)
}

// Logout removes a remote server's tokens and client registrations from
// Options.Credentials, revoking the tokens where the authorization server
// allows it, for a host whose user asks to log out. It disconnects
// nothing: a live connection fails at its next use. removed counts the
// tokens removed; revokeErr tells of revocations that failed (the tokens
// are removed all the same); err is a failure to remove them.
func (e *Engine) Logout(ctx context.Context, server string) (removed int, revokeErr, err error) {
	return e.core.Logout(ctx, server)
}
