package identity

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// Opaque access tokens (settings.identity.introspection): a token that is
// not a JWT is sent to the issuer's introspection endpoint (RFC 7662),
// which the gateway calls as a client of its own (client_secret_basic,
// section 2.1). The answer is taken only when it says "active": true, has
// an "exp" not passed (with Leeway) and a "sub", an "iss" (if any) that is
// the issuer, and an "aud" that names the gateway: an authorization server
// answers for every resource, and a token for another one must not pass
// here.
//
// Positive answers are kept, by the SHA-256 of the token (never the token
// itself), until the token expires or IntrospectionCacheTTL has passed,
// whichever is first; at most IntrospectionCacheSize of them, the oldest
// out first. A token revoked at the issuer may so be taken for up to
// IntrospectionCacheTTL more. The cache belongs to one Verifier, made for
// one configuration: it is never shared with another.

const (
	// IntrospectionCacheTTL is how long a positive introspection answer
	// is kept at most.
	IntrospectionCacheTTL = 60 * time.Second
	// IntrospectionCacheSize is how many answers are kept at most.
	IntrospectionCacheSize = 4096
	// MaxIntrospectionBytes bounds an introspection answer: a larger one
	// is an error of the endpoint.
	MaxIntrospectionBytes = 1 << 20
	// IntrospectionTimeout bounds an introspection request, and the
	// reading of the issuer's discovery document for its endpoint.
	IntrospectionTimeout = 10 * time.Second
)

// ErrUnavailable is matched by the error of a token that could not be
// checked because the introspection endpoint failed (unreachable, an
// error status, an answer too large or not JSON): the token may be good,
// and the client may try again later.
var ErrUnavailable = errors.New("the authorization server could not check the access token")

// isJWT reports whether raw is shaped as a JWT (JWS compact form): three
// parts of base64url joined by dots. An empty signature (alg "none") is
// still a JWT's shape, for the JWT checks to refuse.
func isJWT(raw string) bool {
	if strings.Count(raw, ".") != 2 {
		return false
	}
	for _, c := range raw {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// introspect checks an opaque token at the introspection endpoint, or in
// the cache of its earlier answers.
func (v *Verifier) introspect(ctx context.Context, raw string) (*User, time.Time, error) {
	in := v.cfg.Introspection
	if in == nil {
		return nil, time.Time{}, fmt.Errorf("%w: it is not a JWT, and this gateway takes only JWT access tokens (hint: for opaque tokens, set settings.identity.introspection)", ErrToken)
	}
	key := sha256.Sum256([]byte(raw))
	now := time.Now()
	if u, exp, ok := v.cache.get(key, now); ok {
		return u, exp, nil
	}
	endpoint, err := v.introspectionURL(ctx)
	if err == nil {
		var ans map[string]any
		if ans, err = v.post(ctx, endpoint, raw); err == nil {
			return v.keep(key, ans, now)
		}
	}
	v.log.Warn("token introspection failed", "err", err)
	return nil, time.Time{}, err
}

// keep checks an introspection answer and keeps it when it is taken.
func (v *Verifier) keep(key [sha256.Size]byte, ans map[string]any, now time.Time) (*User, time.Time, error) {
	u, exp, err := v.accept(ans, time.Now())
	if err != nil {
		return nil, time.Time{}, err
	}
	v.cache.put(key, u, exp, now)
	return u.clone(), exp, nil
}

// introspectionURL returns the endpoint: settings.identity.introspection's
// url, or the issuer's discovery document's introspection_endpoint, read
// the first time (a failed read is tried again by the next token).
func (v *Verifier) introspectionURL(ctx context.Context) (string, error) {
	if u := v.cfg.Introspection.URL; u != "" {
		return u, nil
	}
	v.mu.Lock()
	u := v.endpoint
	v.mu.Unlock()
	if u != "" {
		return u, nil
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, v.client), IntrospectionTimeout)
	defer cancel()
	p, err := oidc.NewProvider(ctx, v.cfg.Issuer)
	if err != nil {
		return "", fmt.Errorf("%w: reading the discovery document of the issuer %q: %v (hint: check settings.identity.issuer, or give settings.identity.introspection.url)", ErrUnavailable, v.cfg.Issuer, err)
	}
	var doc struct {
		Endpoint string `json:"introspection_endpoint"`
	}
	if err := p.Claims(&doc); err != nil || doc.Endpoint == "" {
		return "", fmt.Errorf("%w: the discovery document of the issuer %q names no introspection_endpoint (hint: give settings.identity.introspection.url)", ErrUnavailable, v.cfg.Issuer)
	}
	v.mu.Lock()
	v.endpoint = doc.Endpoint
	v.mu.Unlock()
	return doc.Endpoint, nil
}

// post asks endpoint about raw (RFC 7662 section 2.1) and returns its
// answer's members. Errors name the endpoint, never the token.
func (v *Verifier) post(ctx context.Context, endpoint, raw string) (map[string]any, error) {
	in := v.cfg.Introspection
	ctx, cancel := context.WithTimeout(ctx, IntrospectionTimeout)
	defer cancel()
	form := url.Values{"token": {raw}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("%w: introspecting at %s: %v", ErrUnavailable, endpoint, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749 section 2.3.1: the id and secret are form-encoded first.
	req.SetBasicAuth(url.QueryEscape(in.ClientID), url.QueryEscape(v.secret))
	resp, err := v.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // its URL is the endpoint, named already
		}
		return nil, fmt.Errorf("%w: introspecting at %s: %v", ErrUnavailable, endpoint, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: introspecting at %s: status %s (hint: check settings.identity.introspection's client and secret)", ErrUnavailable, endpoint, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxIntrospectionBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: introspecting at %s: reading the answer: %v", ErrUnavailable, endpoint, err)
	}
	if len(body) > MaxIntrospectionBytes {
		return nil, fmt.Errorf("%w: introspecting at %s: the answer is larger than %d bytes", ErrUnavailable, endpoint, MaxIntrospectionBytes)
	}
	var ans map[string]any
	if err := json.Unmarshal(body, &ans); err != nil || ans == nil {
		return nil, fmt.Errorf("%w: introspecting at %s: the answer is not a JSON object", ErrUnavailable, endpoint)
	}
	return ans, nil
}

// accept checks an introspection answer, at now, and returns its user
// and expiry.
func (v *Verifier) accept(ans map[string]any, now time.Time) (*User, time.Time, error) {
	if active, _ := ans["active"].(bool); !active {
		return nil, time.Time{}, fmt.Errorf("%w: the authorization server says it is not active (expired, revoked, or not its token)", ErrToken)
	}
	exp, ok := ans["exp"].(float64)
	if !ok {
		return nil, time.Time{}, fmt.Errorf(`%w: its introspection names no expiry ("exp")`, ErrToken)
	}
	expiry := time.Unix(int64(exp), 0)
	if !now.Before(expiry.Add(Leeway)) {
		return nil, time.Time{}, fmt.Errorf("%w: it expired at %s", ErrToken, expiry.UTC().Format(time.RFC3339))
	}
	if nbf, ok := ans["nbf"].(float64); ok && now.Add(Leeway).Before(time.Unix(int64(nbf), 0)) {
		return nil, time.Time{}, fmt.Errorf(`%w: it is not valid yet ("nbf")`, ErrToken)
	}
	if iss, ok := ans["iss"]; ok && iss != v.cfg.Issuer {
		return nil, time.Time{}, fmt.Errorf("%w: its issuer is not %q", ErrToken, v.cfg.Issuer)
	}
	if !slices.Contains(claimStrings(ans["aud"]), v.cfg.Audience) {
		return nil, time.Time{}, fmt.Errorf("%w: its audience does not name this gateway, %q (hint: have the authorization server put the resource in the token's audience)", ErrToken, v.cfg.Audience)
	}
	sub := claimString(ans, "sub")
	if sub == "" {
		return nil, time.Time{}, fmt.Errorf(`%w: its introspection has no "sub"`, ErrToken)
	}
	u := &User{Subject: sub, ClientID: claimString(ans, "client_id"), Groups: claimStrings(ans[v.cfg.GroupsClaim])}
	return u, expiry, nil
}

func (u *User) clone() *User {
	c := *u
	c.Groups = slices.Clone(u.Groups)
	return &c
}

// answers is the cache of positive introspection answers, by the SHA-256
// of their token: bounded, the oldest out first. The zero value is empty.
type answers struct {
	mu    sync.Mutex
	byKey map[[sha256.Size]byte]*list.Element // of *answer
	order list.List                           // oldest first
}

type answer struct {
	key   [sha256.Size]byte
	user  *User
	exp   time.Time // the token's
	until time.Time // when the answer is dropped
}

// get returns the kept answer for key, if it is still good at now.
func (c *answers) get(key [sha256.Size]byte, now time.Time) (*User, time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, time.Time{}, false
	}
	a := e.Value.(*answer)
	if !now.Before(a.until) {
		c.order.Remove(e)
		delete(c.byKey, key)
		return nil, time.Time{}, false
	}
	return a.user.clone(), a.exp, true
}

// put keeps u's answer from now until min(exp, now+IntrospectionCacheTTL).
func (c *answers) put(key [sha256.Size]byte, u *User, exp, now time.Time) {
	until := now.Add(IntrospectionCacheTTL)
	if exp.Before(until) {
		until = exp
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = make(map[[sha256.Size]byte]*list.Element)
	}
	if e, ok := c.byKey[key]; ok {
		c.order.Remove(e)
	}
	c.byKey[key] = c.order.PushBack(&answer{key: key, user: u.clone(), exp: exp, until: until})
	for c.order.Len() > IntrospectionCacheSize {
		old := c.order.Remove(c.order.Front()).(*answer)
		delete(c.byKey, old.key)
	}
}
