package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/switchboard-mcp/switchboard/internal/printable"
)

// maxStepUps bounds the authorizations a handler starts because the server
// answered 403 insufficient_scope: a server that asks for more scope after
// every grant must not send the user to the browser forever.
const maxStepUps = 2

// refreshTimeout bounds one refresh, including the wait for the store's
// lock, when the transport asks for a token (it gives no context).
const refreshTimeout = 30 * time.Second

// A Handler authorizes the connections to one server: it is the go-sdk
// auth.OAuthHandler of a Streamable HTTP transport, and what an SSE
// transport's round tripper asks for tokens. It sends the stored token,
// refreshes it ahead of its expiry and after a 401, and, when the server
// asks for authorization it cannot give, fails with a *NeedsLoginError, or
// logs in through Options.Prompt when one is set. Its methods are safe for
// concurrent use.
type Handler struct {
	cfg    Config
	opts   Options
	client *http.Client // opts.HTTPClient, guarded (see guard.go)
	key    *clientKey   // Config.ClientKey, parsed; nil for none

	login chan struct{} // a semaphore of one: one authorization at a time

	mu      sync.Mutex
	cur     *tokenRecord // the token in use; nil when none is stored
	flight  *flight      // the refresh under way, if any (see refresh)
	stepUps int          // authorizations started by 403 insufficient_scope
	reason  string       // why the last token was dropped, for NeedsLoginError
}

var _ auth.OAuthHandler = (*Handler)(nil)

// New returns the handler of one server.
func New(cfg Config, opts *Options) (*Handler, error) {
	h := &Handler{cfg: cfg, login: make(chan struct{}, 1)}
	if opts != nil {
		h.opts = *opts
	}
	h.opts.fill()
	h.client = guarded(h.opts.HTTPClient, cfg.URL)
	switch {
	case h.opts.Store == nil:
		return nil, errors.New("oauth: a credential store is required")
	case cfg.Server == "" || cfg.URL == "":
		return nil, errors.New("oauth: the server's name and URL are required")
	case cfg.grant() != GrantAuthorizationCode && cfg.grant() != GrantClientCredentials && cfg.grant() != GrantTokenExchange:
		return nil, fmt.Errorf("oauth: server %q: unknown grant %q", cfg.Server, cfg.Grant)
	case cfg.machine() && (cfg.ClientID == "" || cfg.ClientSecret == "" && cfg.ClientKey == ""):
		return nil, fmt.Errorf("oauth: server %q: the %s grant needs a clientId and a clientSecret or clientKey", cfg.Server, cfg.grant())
	case cfg.ClientKey != "" && !cfg.machine():
		return nil, fmt.Errorf("oauth: server %q: a clientKey authenticates the client_credentials and token_exchange grants only", cfg.Server)
	case cfg.grant() == GrantTokenExchange && (cfg.User == "" || cfg.SubjectToken == nil):
		return nil, fmt.Errorf("oauth: server %q: the token_exchange grant exchanges a signed-in user's own token, and this connection has no user (hint: it needs settings.identity and serve --http)", cfg.Server)
	case cfg.ClientKey != "" && cfg.ClientSecret != "":
		return nil, fmt.Errorf("oauth: server %q: give the client a clientSecret or a clientKey, not both", cfg.Server)
	}
	if cfg.ClientKey != "" {
		k, err := parseClientKey(cfg.ClientKey)
		if err != nil {
			return nil, fmt.Errorf("oauth: server %q: the clientKey: %w", cfg.Server, err)
		}
		h.key = k
	}
	return h, nil
}

// TokenSource implements auth.OAuthHandler. It is nil while no token is
// stored, so the request goes without one and its 401 starts Authorize.
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	cur := h.cur
	h.mu.Unlock()
	if cur != nil {
		return tokenSource{h}, nil
	}
	rec, err := loadToken(h.opts.Store, &h.cfg)
	if err != nil {
		return nil, h.step("reading the stored token", err)
	}
	if rec == nil {
		return nil, nil
	}
	h.mu.Lock()
	if h.cur == nil {
		h.cur = rec
	}
	h.mu.Unlock()
	return tokenSource{h}, nil
}

// Token returns the token to send, refreshing it first when it expires
// within the refresh margin. It is what the SSE transport calls.
func (h *Handler) Token() (*oauth2.Token, error) {
	h.mu.Lock()
	cur := h.cur
	h.mu.Unlock()
	if cur == nil {
		return nil, ErrNoToken
	}
	if fresh(cur, time.Now()) {
		return cur.token(), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), refreshTimeout)
	defer cancel()
	rec, err := h.refresh(ctx, cur, cur.AccessToken, false)
	if errors.Is(err, ErrNeedsLogin) {
		// The transport sends the request without a token: its 401
		// reaches Authorize, which says why.
		return nil, ErrNoToken
	}
	if err != nil {
		return nil, err
	}
	return rec.token(), nil
}

// ErrNoToken is what a Handler's token source returns when there is no
// usable token to send. go-sdk's Streamable transport then sends the
// request without one (an invalid_grant error, mcp/streamable.go,
// setMCPHeaders), and the server's 401 reaches Authorize, which says why.
var ErrNoToken = &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "no usable OAuth token is stored"}

type tokenSource struct{ h *Handler }

func (s tokenSource) Token() (*oauth2.Token, error) { return s.h.Token() }

// Authorize implements auth.OAuthHandler: the request req was answered
// resp, a 401 or a 403. It returns nil when the request may be retried
// with a new token.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	challenges := drainChallenges(resp)
	stepUp := resp.StatusCode == http.StatusForbidden
	if stepUp && errorFromChallenges(challenges) != "insufficient_scope" {
		// Not an authorization problem: the retry fails the same way
		// and the caller sees the 403.
		return nil
	}
	sent := bearer(req)
	if !stepUp {
		if ok, err := h.recover(ctx, sent); ok || err != nil {
			return err
		}
	}
	switch h.cfg.grant() {
	case GrantClientCredentials:
		return h.clientCredentials(ctx, challenges)
	case GrantTokenExchange:
		return h.exchange(ctx, challenges, sent, false)
	}
	return h.authorize(ctx, challenges, sent, stepUp)
}

// Login starts a new authorization whatever is stored, as switchboard auth
// login does: resp is the server's answer to a request without a token.
// It needs Options.Prompt (not for client_credentials).
func (h *Handler) Login(ctx context.Context, resp *http.Response) error {
	challenges := drainChallenges(resp)
	switch h.cfg.grant() {
	case GrantClientCredentials:
		return h.clientCredentials(ctx, challenges)
	case GrantTokenExchange:
		return h.exchange(ctx, challenges, "", true)
	}
	if h.opts.Prompt == nil {
		return errors.New("oauth: Login needs a Prompter")
	}
	if err := h.acquireLogin(ctx); err != nil {
		return err
	}
	defer h.releaseLogin()
	return h.loginFlow(ctx, challenges, nil)
}

func drainChallenges(resp *http.Response) []oauthex.Challenge {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	// A malformed challenge counts as none: discovery then uses the
	// well-known locations.
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	return challenges
}

// recover handles a 401 without a new authorization: another process or
// request stored a new token since sent was sent, or the token sent can be
// refreshed. ok reports that the request may be retried.
func (h *Handler) recover(ctx context.Context, sent string) (ok bool, err error) {
	rec, err := loadToken(h.opts.Store, &h.cfg)
	if err != nil {
		return false, h.step("reading the stored token", err)
	}
	h.mu.Lock()
	switch {
	case rec == nil:
		h.cur = nil
		h.mu.Unlock()
		return false, nil
	case rec.AccessToken != sent && !expired(rec, time.Now()):
		h.cur = rec
		h.mu.Unlock()
		return true, nil
	case rec.RefreshToken == "":
		h.mu.Unlock()
		return false, nil
	}
	h.cur = rec
	h.mu.Unlock()
	_, err = h.refresh(ctx, rec, sent, true)
	if errors.Is(err, ErrNeedsLogin) {
		return false, nil
	}
	return err == nil, err
}

// authorize starts a new authorization, or says a login is needed when
// the handler may not start one.
func (h *Handler) authorize(ctx context.Context, challenges []oauthex.Challenge, sent string, stepUp bool) error {
	if err := h.acquireLogin(ctx); err != nil {
		return err
	}
	defer h.releaseLogin()
	h.mu.Lock()
	cur := h.cur
	if !stepUp && cur != nil && cur.AccessToken != sent {
		// Another request logged in while this one waited.
		h.mu.Unlock()
		return nil
	}
	if stepUp {
		if want := scopeFromChallenges(challenges); cur != nil && len(want) > 0 && subset(want, cur.Scopes) {
			h.mu.Unlock()
			return h.step("stepping up", fmt.Errorf("the server answers 403 insufficient_scope and asks for %s, which the token already holds: a new authorization would not help", printable.Clip(strings.Join(want, " "), 200)))
		}
		if h.stepUps >= maxStepUps {
			h.mu.Unlock()
			return h.step("stepping up", fmt.Errorf("the server still answers 403 insufficient_scope after %d new authorizations", maxStepUps))
		}
		h.stepUps++
	}
	reason := h.reason
	h.mu.Unlock()
	if !stepUp && reason == "" && !hasBearer(challenges) {
		// No Bearer challenge: perhaps a server that takes an API key. A
		// connection does not start a login on a guess; auth login may.
		return &NeedsLoginError{Server: h.cfg.Server, Reason: "the server answered HTTP 401 Unauthorized", NoChallenge: true}
	}
	if h.opts.Prompt == nil {
		return &NeedsLoginError{Server: h.cfg.Server, Reason: needsReason(reason, stepUp, scopeFromChallenges(challenges))}
	}
	var granted []string
	if cur != nil {
		granted = cur.Scopes
	}
	return h.loginFlow(ctx, challenges, granted)
}

// subset reports whether every scope of a is in b.
func subset(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

func needsReason(reason string, stepUp bool, scope []string) string {
	switch {
	case stepUp && len(scope) > 0:
		return fmt.Sprintf("the server asks for more scope (%s)", printable.Clip(strings.Join(scope, " "), 200))
	case stepUp:
		return "the server asks for more scope"
	case reason != "":
		return reason
	}
	return "the server requires an OAuth login"
}

func (h *Handler) acquireLogin(ctx context.Context) error {
	select {
	case h.login <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *Handler) releaseLogin() { <-h.login }

// step wraps err as the failure of a step of authorizing this server,
// without the secrets the handler knows.
func (h *Handler) step(step string, err error) error {
	var nl *NeedsLoginError
	if errors.As(err, &nl) {
		return err
	}
	return &Error{Server: h.cfg.Server, Step: step, Err: redact(err, h.cfg.ClientSecret, h.subjectToken())}
}

// bearer returns the token a request carried.
func bearer(req *http.Request) string {
	v := req.Header.Get("Authorization")
	if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		return v[7:]
	}
	return ""
}

// refreshMargin is how long before its expiry a token is refreshed: a
// minute, or half its lifetime when that is shorter.
func refreshMargin(rec *tokenRecord) time.Duration {
	life := rec.Expiry.Sub(rec.ObtainedAt)
	return min(time.Minute, life/2)
}

// fresh reports whether rec can be sent without refreshing it first.
func fresh(rec *tokenRecord, now time.Time) bool {
	return rec.Expiry.IsZero() || now.Add(refreshMargin(rec)).Before(rec.Expiry)
}

func expired(rec *tokenRecord, now time.Time) bool {
	return !rec.Expiry.IsZero() && !now.Before(rec.Expiry)
}

func (r *tokenRecord) token() *oauth2.Token {
	return &oauth2.Token{AccessToken: r.AccessToken, TokenType: "Bearer", RefreshToken: r.RefreshToken, Expiry: r.Expiry}
}

// redact replaces each secret in err's text with [redacted]; err keeps
// nothing else (a hostile server's error may echo what it was sent).
func redact(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := msg
	for _, s := range secrets {
		if len(s) >= 4 {
			clean = strings.ReplaceAll(clean, s, "[redacted]")
		}
	}
	if clean == msg {
		return err
	}
	return errors.New(clean)
}
