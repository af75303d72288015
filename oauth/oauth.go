// Package oauth is Switchboard's OAuth 2.1 client for remote MCP servers,
// as the MCP authorization specification (2025-11-25, with the 2025-03-26
// fallbacks) describes it.
//
// It is built on go-sdk's auth and oauthex packages and golang.org/x/oauth2,
// and adds what a long-lived gateway needs and they lack: tokens and client
// registrations kept in a credstore.Store and reused across processes;
// refresh ahead of expiry and after a 401, one at a time per server across
// processes; a login that is separate from the connection (switchboard auth
// login), with a loopback listener for the redirect; a connection that never
// starts a login by itself unless a Prompter is given; the 2025-03-26
// metadata fallback whose issuer differs from the server's origin; and
// errors that name the server and the step, without a token in them.
//
// A [Handler] is the go-sdk auth.OAuthHandler of one connection, and logs
// in ([Handler.Login]). [Lookup] and [Logout] read and remove what is
// stored.
package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/credstore"
)

// Grants.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	GrantTokenExchange     = "token_exchange" // RFC 8693: see exchange.go
)

// Config is the OAuth configuration of one server, with its references
// resolved.
type Config struct {
	// Server is the server's name, for keys, errors and hints.
	Server string
	// URL is the server's MCP endpoint: the protected resource.
	URL string
	// Grant is GrantAuthorizationCode (the default when empty),
	// GrantClientCredentials or GrantTokenExchange.
	Grant string
	// ClientID and ClientSecret are a pre-registered client. Without
	// ClientID, the client is a client ID metadata document (when
	// ClientMetadataURL is set and the authorization server supports
	// them) or registers dynamically (RFC 7591).
	ClientID, ClientSecret string
	// ClientKey, instead of ClientSecret, is the PEM private key the
	// client authenticates with, signing an assertion for each token
	// request (private_key_jwt, RFC 7523); for the client_credentials
	// grant, or GrantTokenExchange.
	ClientKey string
	// Audience is the audience parameter of a token exchange, if any.
	Audience string
	// SubjectToken returns the signed-in user's own access token, the
	// subject_token of a token exchange (GrantTokenExchange, with User):
	// "" when there is none. The token is never logged, stored, or put in
	// an error.
	SubjectToken func() string
	// ClientMetadataURL is the https URL of a client ID metadata document
	// that describes Switchboard as a client of this server.
	ClientMetadataURL string
	// Scopes, when set, are the scopes to ask for, instead of those the
	// server's challenge or metadata suggest.
	Scopes []string
	// RedirectPort is the loopback port of the redirect URI; 0 picks one.
	RedirectPort int
	// User, when set, is the signed-in user (a token's subject) whose own
	// tokens these are: a server with per-user credentials keeps each
	// user's tokens under a key of their own, and never hands one user's
	// token to another's connection. The client registration stays the
	// gateway's, shared. "" is the one shared login.
	User string
}

func (c *Config) grant() string {
	if c.Grant == "" {
		return GrantAuthorizationCode
	}
	return c.Grant
}

// machine reports whether the grant is made by the configured client
// alone, with its secret or key: client_credentials and token_exchange.
func (c *Config) machine() bool {
	return c.grant() == GrantClientCredentials || c.grant() == GrantTokenExchange
}

// clientIdentity is what the stored state of this configuration is bound
// to besides the URL: the configured client, or dynamic registration.
func (c *Config) clientIdentity() string {
	switch {
	case c.ClientID != "":
		return "id:" + c.ClientID
	case c.ClientMetadataURL != "":
		return "cimd:" + c.ClientMetadataURL
	}
	return "dynamic"
}

// keyBase is the prefix of this configuration's keys in the store:
// oauth/SERVER/HASH, where HASH binds the URL, the grant and the client, so
// a token is only ever sent to the URL and client it was issued for.
func (c *Config) keyBase() string {
	sum := sha256.Sum256([]byte(c.URL + "\x00" + c.grant() + "\x00" + c.clientIdentity()))
	return "oauth/" + c.Server + "/" + hex.EncodeToString(sum[:8])
}

// tokenKey is where the tokens are: KEYBASE/token, or for a user
// KEYBASE/user/HASH/token, where HASH is of the user's subject (a subject
// may hold any character).
func (c *Config) tokenKey() string {
	if c.User == "" {
		return c.keyBase() + "/token"
	}
	sum := sha256.Sum256([]byte(c.User))
	return c.keyBase() + userInfix + hex.EncodeToString(sum[:12]) + "/token"
}

// userInfix marks a user's tokens in a key (see tokenKey).
const userInfix = "/user/"

func (c *Config) clientKey() string { return c.keyBase() + "/client" }

// Options are what a Handler works with besides its Config.
type Options struct {
	// Store keeps tokens and client registrations. Required.
	Store credstore.Store
	// HTTPClient makes the discovery, registration, token and revocation
	// requests, through a guard that keeps them out of the local network
	// unless the server is in it, and client credentials and tokens from
	// following a redirect to another origin (see guard.go). Default:
	// http.DefaultClient.
	HTTPClient *http.Client
	// Prompt, when set, lets a connection that meets a server needing a
	// login start one (see Prompter); without it, such a connection fails
	// with a *NeedsLoginError.
	Prompt Prompter
	// ClientName is the client_name of dynamic registrations. Default
	// "Switchboard".
	ClientName string
	// Logger receives refresh failures that are not yet errors.
	Logger *slog.Logger
	// LoginTimeout bounds a login's wait for the browser. Default 5
	// minutes.
	LoginTimeout time.Duration
	// Waiting, when set, is called with the request's context while a
	// login waits for the user, and what it returns once the wait is over:
	// a caller whose requests have a timeout stops it meanwhile.
	Waiting func(ctx context.Context) (done func())
}

// DefaultLoginTimeout is how long a login waits for the redirect.
const DefaultLoginTimeout = 5 * time.Minute

func (o *Options) fill() {
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	if o.ClientName == "" {
		o.ClientName = "Switchboard"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.LoginTimeout <= 0 {
		o.LoginTimeout = DefaultLoginTimeout
	}
}

// tokenRecord is a token as stored, with what refreshing and revoking it
// needs. The access and refresh tokens are the only secrets in it.
type tokenRecord struct {
	Server        string    `json:"server"`
	URL           string    `json:"url"`
	Grant         string    `json:"grant"`
	Issuer        string    `json:"issuer,omitempty"`
	ClientID      string    `json:"clientId"`
	TokenURL      string    `json:"tokenUrl"`
	AuthMethod    string    `json:"authMethod"` // client_secret_basic, client_secret_post or none
	RevocationURL string    `json:"revocationUrl,omitempty"`
	Resource      string    `json:"resource,omitempty"`
	Scopes        []string  `json:"scopes,omitempty"`
	AccessToken   string    `json:"accessToken"`
	RefreshToken  string    `json:"refreshToken,omitempty"`
	Expiry        time.Time `json:"expiry,omitzero"`
	ObtainedAt    time.Time `json:"obtainedAt"`
}

// clientRecord is a dynamic client registration as stored, reused by later
// logins at the same authorization server.
type clientRecord struct {
	Issuer          string    `json:"issuer"`
	ClientID        string    `json:"clientId"`
	ClientSecret    string    `json:"clientSecret,omitempty"`
	AuthMethod      string    `json:"authMethod"`
	RedirectURIs    []string  `json:"redirectUris"`
	RegisteredAt    time.Time `json:"registeredAt"`
	SecretExpiresAt time.Time `json:"secretExpiresAt,omitzero"`
}

// usable reports whether the registration can still be used with the
// issuer: its secret, if any, has not expired.
func (r *clientRecord) usable(issuer string, now time.Time) bool {
	return issuersEqual(r.Issuer, issuer) && (r.SecretExpiresAt.IsZero() || now.Before(r.SecretExpiresAt))
}

func issuersEqual(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

// load reads and decodes the value under key; ok is false when there is
// none. A value that does not decode is treated as absent and removed: a
// half-written or foreign value must not stop a new login.
func load[T any](s credstore.Store, key string) (*T, bool, error) {
	b, ok, err := s.Get(key)
	if err != nil || !ok {
		return nil, false, err
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		_ = s.Delete(key)
		return nil, false, nil
	}
	return &v, true, nil
}

func save(s credstore.Store, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.Set(key, b)
}

// loadToken reads the stored token of c, checking that it was issued for
// this very URL and client.
func loadToken(s credstore.Store, c *Config) (*tokenRecord, error) {
	rec, ok, err := load[tokenRecord](s, c.tokenKey())
	if err != nil || !ok {
		return nil, err
	}
	if rec.URL != c.URL || rec.Grant != c.grant() || (c.ClientID != "" && rec.ClientID != c.ClientID) || rec.AccessToken == "" {
		return nil, nil
	}
	return rec, nil
}

// ErrNeedsLogin is matched by every *NeedsLoginError.
var ErrNeedsLogin = errors.New("needs-auth")

// NeedsLoginError says that a server needs an OAuth login that this
// connection may not start: no token is stored, or the stored one was
// refused and cannot be refreshed.
type NeedsLoginError struct {
	Server string
	Reason string // what happened, e.g. "the server requires an OAuth login"
	// NoChallenge is set when the server's 401 carried no Bearer
	// challenge: it may want an API key rather than an OAuth login.
	NoChallenge bool
	// NoLogin is set when a login would not help: the server's tokens
	// come from exchanging the signed-in user's own (the token_exchange
	// grant).
	NoLogin bool
}

func (e *NeedsLoginError) Error() string {
	if e.NoLogin {
		return fmt.Sprintf("needs-auth: %s; hint: sign in to the gateway again, and if it persists ask the authorization server's administrator to let the gateway's client exchange your token for %s", e.Reason, e.Server)
	}
	if e.NoChallenge {
		return fmt.Sprintf("needs-auth: %s; hint: switchboard auth login %s if it logs in with OAuth, else give it credentials in the server's headers", e.Reason, e.Server)
	}
	return fmt.Sprintf("needs-auth: %s; hint: switchboard auth login %s", e.Reason, e.Server)
}

// Is makes errors.Is(err, ErrNeedsLogin) true.
func (e *NeedsLoginError) Is(target error) bool { return target == ErrNeedsLogin }

// An Error is a failed step of authorizing a server: it names the server
// and the step ("reading the authorization server metadata", "registering
// the client", "exchanging the authorization code", …). It never holds a
// token or a secret.
type Error struct {
	Server, Step string
	Err          error
}

func (e *Error) Error() string {
	return fmt.Sprintf("authorizing %q: %s: %v", e.Server, e.Step, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }
