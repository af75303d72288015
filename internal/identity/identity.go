// Package identity makes Switchboard an OAuth resource server: it checks
// the access tokens a team's authorization server issued for the gateway
// and names the user each one stands for (docs/team.md).
//
// A token is a JWT signed with one of the issuer's keys (its JWKS, read
// from settings.identity.jwksUrl or the issuer's discovery document, and
// read again when a token names a key it has not seen): an asymmetric
// algorithm only (never "none", never HMAC, whose secret a public key
// would be), "iss" the issuer, "aud" naming the gateway, "exp" not passed
// and "nbf" reached, with a little leeway for clocks. The checks are
// github.com/coreos/go-oidc's, on github.com/go-jose/go-jose.
//
// A token that is not a JWT is opaque: it is checked at the issuer's
// introspection endpoint when settings.identity.introspection is set
// (introspect.go), and refused otherwise.
//
// New does no work and no I/O: the first token verified reads the
// issuer's keys.
package identity

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/switchboard-mcp/switchboard/config"
)

// Leeway is how far the gateway's clock may be behind the issuer's: a
// token is still taken this long after its "exp".
const Leeway = 30 * time.Second

// algorithms are the signing algorithms a token may use: asymmetric ones.
var algorithms = []string{
	oidc.RS256, oidc.RS384, oidc.RS512,
	oidc.PS256, oidc.PS384, oidc.PS512,
	oidc.ES256, oidc.ES384, oidc.ES512,
	oidc.EdDSA,
}

// User is who a request comes from: the token's subject, the client it
// was issued to, and the user's groups.
type User struct {
	Subject  string   `json:"sub"`
	ClientID string   `json:"clientId,omitempty"`
	Groups   []string `json:"groups,omitempty"`
}

// In reports whether the user is a member of group ("" is no group).
func (u *User) In(group string) bool {
	return u != nil && group != "" && slices.Contains(u.Groups, group)
}

type userKey struct{}

// With returns ctx carrying u.
func With(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// From returns the user ctx carries, or nil.
func From(ctx context.Context) *User {
	u, _ := ctx.Value(userKey{}).(*User)
	return u
}

// ErrToken is matched by the error of a token that is refused.
var ErrToken = errors.New("access token refused")

// Verifier checks access tokens against settings.identity. Its methods are
// safe for concurrent use.
type Verifier struct {
	cfg    config.Identity
	secret string       // of cfg.Introspection's client
	client *http.Client // for introspection
	cache  answers      // of introspection
	log    *slog.Logger

	mu       sync.Mutex
	v        *oidc.IDTokenVerifier // nil until the issuer's keys are found
	endpoint string                // the introspection endpoint, once discovered
}

// Options are what New takes besides the settings.
type Options struct {
	// IntrospectionSecret is the secret of the client of
	// settings.identity.introspection (config.Introspection.Secret
	// resolves it).
	IntrospectionSecret string
	// Transport, if set, carries the introspection requests. Default
	// http.DefaultTransport.
	Transport http.RoundTripper
	// Logger receives the errors of the introspection endpoint (never a
	// token). Default: discard.
	Logger *slog.Logger
}

// New returns a verifier for cfg. It does no I/O. opts may be nil.
func New(cfg *config.Identity, opts *Options) *Verifier {
	var o Options
	if opts != nil {
		o = *opts
	}
	v := &Verifier{cfg: *cfg, secret: o.IntrospectionSecret, log: o.Logger}
	if v.log == nil {
		v.log = slog.New(slog.DiscardHandler)
	}
	if v.cfg.GroupsClaim == "" {
		v.cfg.GroupsClaim = config.DefaultGroupsClaim
	}
	// Redirects are not followed: a 307 would send the token, and the
	// gateway's credentials, to wherever it points.
	v.client = &http.Client{Transport: o.Transport, Timeout: IntrospectionTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return v
}

// Config returns the settings the verifier checks against.
func (v *Verifier) Config() *config.Identity { return &v.cfg }

// Verify checks a raw access token and returns its user and when it
// expires. A refused token's error matches ErrToken and says why, without
// repeating the token.
//
// An opaque token is checked by introspection (introspect.go); an error
// of the introspection endpoint matches ErrUnavailable.
func (v *Verifier) Verify(ctx context.Context, raw string) (*User, time.Time, error) {
	if !isJWT(raw) {
		return v.introspect(ctx, raw)
	}
	ver, err := v.verifier(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	tok, err := ver.Verify(ctx, raw)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("%w: %v", ErrToken, err)
	}
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return nil, time.Time{}, fmt.Errorf("%w: reading its claims: %v", ErrToken, err)
	}
	if tok.Subject == "" {
		return nil, time.Time{}, fmt.Errorf(`%w: it has no "sub" claim`, ErrToken)
	}
	u := &User{Subject: tok.Subject, ClientID: claimString(claims, "azp")}
	if u.ClientID == "" {
		u.ClientID = claimString(claims, "client_id")
	}
	u.Groups = claimStrings(claims[v.cfg.GroupsClaim])
	return u, tok.Expiry, nil
}

// verifier returns the go-oidc verifier, finding the issuer's keys the
// first time: at jwksUrl, or where the issuer's discovery document says.
// A failed discovery is tried again by the next token.
func (v *Verifier) verifier(ctx context.Context) (*oidc.IDTokenVerifier, error) {
	v.mu.Lock()
	ver := v.v
	v.mu.Unlock()
	if ver != nil {
		return ver, nil
	}
	jwks := v.cfg.JWKSURL
	if jwks == "" {
		p, err := oidc.NewProvider(ctx, v.cfg.Issuer)
		if err != nil {
			return nil, fmt.Errorf("reading the discovery document of the issuer %q: %w (hint: check settings.identity.issuer, or give settings.identity.jwksUrl)", v.cfg.Issuer, err)
		}
		var doc struct {
			JWKS string `json:"jwks_uri"`
		}
		if err := p.Claims(&doc); err != nil || doc.JWKS == "" {
			return nil, fmt.Errorf("the discovery document of the issuer %q names no jwks_uri (hint: give settings.identity.jwksUrl)", v.cfg.Issuer)
		}
		jwks = doc.JWKS
	}
	keys := oidc.NewRemoteKeySet(context.WithoutCancel(ctx), jwks)
	ver = oidc.NewVerifier(v.cfg.Issuer, keys, &oidc.Config{
		ClientID:             v.cfg.Audience,
		SupportedSigningAlgs: algorithms,
		Now:                  func() time.Time { return time.Now().Add(-Leeway) },
	})
	v.mu.Lock()
	if v.v == nil {
		v.v = ver
	}
	ver = v.v
	v.mu.Unlock()
	return ver, nil
}

// Grants returns the tool patterns (mcp__SERVER__GLOB) u may use, and
// whether rules apply at all (see config.Identity.Rules).
func (v *Verifier) Grants(u *User) ([]string, bool) {
	var groups []string
	if u != nil {
		groups = u.Groups
	}
	return v.cfg.Grants(groups)
}

// Admin reports whether u may use the admin endpoint: a member of
// settings.identity.adminGroup.
func (v *Verifier) Admin(u *User) bool { return u.In(v.cfg.AdminGroup) }

func claimString(claims map[string]any, name string) string {
	s, _ := claims[name].(string)
	return s
}

// claimStrings reads a groups claim: a list of strings, or one string.
func claimStrings(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
