package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// follow is a Prompter whose browser approves at once.
func follow(ctx context.Context, _, authURL string) (string, error) {
	_, err := oauthtest.Follow(ctx, authURL)
	return "", err
}

// unauthorized asks the server without a token and returns its 401.
func unauthorized(t *testing.T, u string) (*http.Request, *http.Response) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, u, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the server answered %d without a token, want 401", resp.StatusCode)
	}
	return req, resp
}

// withToken asks the server with the handler's token, as a transport does,
// and returns the status.
func withToken(t *testing.T, h *oauth.Handler, u string) int {
	t.Helper()
	ts, err := h.TokenSource(t.Context())
	if err != nil || ts == nil {
		t.Fatalf("TokenSource = %v, %v", ts, err)
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatalf("Token: %v", err)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, u, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func newHandler(t *testing.T, cfg oauth.Config, store credstore.Store, prompt oauth.Prompter) *oauth.Handler {
	t.Helper()
	h, err := oauth.New(cfg, &oauth.Options{Store: store, Prompt: prompt})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func login(t *testing.T, h *oauth.Handler, u string) error {
	t.Helper()
	_, resp := unauthorized(t, u)
	return h.Login(t.Context(), resp)
}

// TestLoginDynamicRegistration logs in with a dynamic registration, PKCE
// and the resource parameter, and uses the token; a second login reuses
// the stored registration; a handler without a Prompter uses the stored
// token and, once it is gone, says a login is needed.
func TestLoginDynamicRegistration(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{Scopes: []string{"read", "offline_access"}})
	store := credstore.NewFile(t.TempDir())
	cfg := oauth.Config{Server: "api", URL: as.URL()}
	h := newHandler(t, cfg, store, follow)
	if err := login(t, h, as.URL()); err != nil {
		t.Fatal(err)
	}
	q := as.LastAuthorization()
	if q.Get("code_challenge_method") != "S256" || q.Get("resource") != as.URL() || !strings.Contains(q.Get("scope"), "offline_access") {
		t.Errorf("authorization request %v: want S256, resource %s and offline_access", q, as.URL())
	}
	if got := as.LastResource(); got != as.URL() {
		t.Errorf("token request resource = %q, want %q", got, as.URL())
	}
	if code := withToken(t, h, as.URL()); code != http.StatusOK {
		t.Errorf("with the token: HTTP %d", code)
	}
	if err := login(t, h, as.URL()); err != nil {
		t.Fatal(err)
	}
	if c := as.Counts(); c.Registrations != 1 || c.CodeGrants != 2 {
		t.Errorf("counts %+v: want one registration reused by the second login", c)
	}

	// Another handler (another process) finds the stored token.
	quiet := newHandler(t, cfg, store, nil)
	if code := withToken(t, quiet, as.URL()); code != http.StatusOK {
		t.Errorf("with the stored token: HTTP %d", code)
	}
	st, err := oauth.Lookup(store, cfg)
	if err != nil || st == nil || !st.Refresh || !slices.Contains(st.Scopes, "read") {
		t.Errorf("Lookup = %+v, %v", st, err)
	}

	// A changed URL never receives the token.
	moved := newHandler(t, oauth.Config{Server: "api", URL: as.URL() + "?v=2"}, store, nil)
	if ts, err := moved.TokenSource(t.Context()); ts != nil || err != nil {
		t.Errorf("TokenSource for another URL = %v, %v; want none", ts, err)
	}

	ts, _ := quiet.TokenSource(t.Context())
	stored, _ := ts.Token()
	before := as.Counts()
	removed, revokeErr, err := oauth.Logout(t.Context(), store, "api", "", nil)
	if err != nil || revokeErr != nil || removed != 1 {
		t.Fatalf("Logout = %d, %v, %v", removed, revokeErr, err)
	}
	if keys, _ := store.Keys(""); len(keys) != 0 {
		t.Errorf("after Logout the store holds %v", keys)
	}
	if c := as.Counts(); c.Revocations != 2 || as.Valid(stored.AccessToken) || c.ValidRefresh != before.ValidRefresh-1 {
		t.Errorf("after Logout: %+v (before %+v), want the stored tokens revoked", c, before)
	}
	req, resp := unauthorized(t, as.URL())
	err = quiet.Authorize(t.Context(), req, resp)
	if !errors.Is(err, oauth.ErrNeedsLogin) || !strings.Contains(err.Error(), "switchboard auth login api") {
		t.Errorf("Authorize after logout = %v, want needs-auth naming the command", err)
	}
}

// TestRefresh: a token that expires is refreshed ahead of its expiry,
// without a login; a refresh token the server revoked leads to needs-auth.
func TestRefresh(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{TokenLifetime: 2 * time.Second})
	store := credstore.NewFile(t.TempDir())
	cfg := oauth.Config{Server: "api", URL: as.URL()}
	if err := login(t, newHandler(t, cfg, store, follow), as.URL()); err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, cfg, store, nil)
	ts, err := h.TokenSource(t.Context())
	if err != nil || ts == nil {
		t.Fatal(ts, err)
	}
	first, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	// The margin is half the lifetime: wait until the token is within it.
	waitUntil(t, first.Expiry.Add(-time.Second))
	as.SetTokenLifetime(time.Hour) // the next tokens stay fresh while checked
	second, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	if second.AccessToken == first.AccessToken || !as.Valid(second.AccessToken) || as.Counts().Refreshes != 1 {
		t.Fatalf("after the margin: new token %v, valid %v, counts %+v; want one refresh", second.AccessToken != first.AccessToken, as.Valid(second.AccessToken), as.Counts())
	}
	if st, _ := oauth.Lookup(store, cfg); st == nil || !st.Expiry.Equal(second.Expiry) {
		t.Errorf("the refreshed token is not the stored one: %+v", st)
	}

	// A 401 with a token that has not expired refreshes it too.
	as.ExpireAccessTokens()
	req, resp := unauthorized(t, as.URL())
	req.Header.Set("Authorization", "Bearer "+second.AccessToken)
	if err := h.Authorize(t.Context(), req, resp); err != nil {
		t.Fatalf("Authorize after a 401: %v", err)
	}
	if code := withToken(t, h, as.URL()); code != http.StatusOK || as.Counts().Refreshes != 2 {
		t.Errorf("after the 401: HTTP %d, counts %+v; want a second refresh", code, as.Counts())
	}

	as.RevokeRefreshTokens()
	as.ExpireAccessTokens()
	third, _ := ts.Token()
	req, resp = unauthorized(t, as.URL())
	req.Header.Set("Authorization", "Bearer "+third.AccessToken)
	err = h.Authorize(t.Context(), req, resp)
	var nl *oauth.NeedsLoginError
	if !errors.As(err, &nl) || !strings.Contains(err.Error(), "refused the stored refresh token (invalid_grant)") {
		t.Fatalf("after revocation: %v, want needs-auth saying the refresh token was refused", err)
	}
	if st, _ := oauth.Lookup(store, cfg); st != nil {
		t.Errorf("the refused token is still stored: %+v", st)
	}
}

// waitUntil waits until the wall clock passes at. Token expiry is the
// point here, so the wait is on the clock, bounded by the token's life.
func waitUntil(t *testing.T, at time.Time) {
	t.Helper()
	if d := time.Until(at); d > 0 {
		select {
		case <-time.After(d):
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		}
	}
}

// TestPreregisteredClientCredentials gets a token with the
// client_credentials grant and a pre-registered client, without a browser.
func TestPreregisteredClientCredentials(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{PreregisteredID: "svc", PreregisteredSecret: "svc-secret-value"})
	store := credstore.NewFile(t.TempDir())
	cfg := oauth.Config{Server: "m2m", URL: as.URL(), Grant: oauth.GrantClientCredentials, ClientID: "svc", ClientSecret: "svc-secret-value"}
	h := newHandler(t, cfg, store, nil)
	req, resp := unauthorized(t, as.URL())
	if err := h.Authorize(t.Context(), req, resp); err != nil {
		t.Fatal(err)
	}
	if code := withToken(t, h, as.URL()); code != http.StatusOK {
		t.Errorf("with the token: HTTP %d", code)
	}
	if c := as.Counts(); c.Registrations != 0 || c.CodeGrants != 0 {
		t.Errorf("counts %+v: want neither registration nor authorization", c)
	}
	bad := newHandler(t, oauth.Config{Server: "m2m", URL: as.URL(), Grant: oauth.GrantClientCredentials, ClientID: "svc", ClientSecret: "wrong-secret"}, credstore.NewFile(t.TempDir()), nil)
	req, resp = unauthorized(t, as.URL())
	err := bad.Authorize(t.Context(), req, resp)
	if err == nil || !strings.Contains(err.Error(), `authorizing "m2m": requesting a client_credentials token: the token endpoint answered HTTP 401: invalid_client`) {
		t.Errorf("with a wrong secret: %v", err)
	}
	if strings.Contains(fmt.Sprint(err), "wrong-secret") {
		t.Errorf("the error holds the secret: %v", err)
	}
}

// TestStepUpBounded: a server that answers 403 insufficient_scope gets a
// new authorization with the scope it asks for, and the old ones, but not
// more than twice.
func TestStepUpBounded(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{RequireScope: "admin", Scopes: []string{"read", "admin"}})
	store := credstore.NewFile(t.TempDir())
	cfg := oauth.Config{Server: "api", URL: as.URL(), Scopes: []string{"read"}}
	h := newHandler(t, cfg, store, follow)
	if err := login(t, h, as.URL()); err != nil {
		t.Fatal(err)
	}
	if code := withToken(t, h, as.URL()); code != http.StatusForbidden {
		t.Fatalf("with scope read: HTTP %d, want 403", code)
	}
	if err := forbiddenAt(t, h, as.URL()); err != nil {
		t.Fatal(err)
	}
	if got := as.LastAuthorization().Get("scope"); got != "read admin" {
		t.Errorf("step-up scope = %q, want %q", got, "read admin")
	}
	if code := withToken(t, h, as.URL()); code == http.StatusForbidden {
		t.Fatalf("after the step-up: still 403")
	}
	// The server insists on a scope it never grants: two step-ups, then
	// an error.
	strict := oauthtest.New(t, oauthtest.Options{RequireScope: "admin", WithholdScope: "admin"})
	h = newHandler(t, oauth.Config{Server: "api", URL: strict.URL()}, credstore.NewFile(t.TempDir()), follow)
	if err := login(t, h, strict.URL()); err != nil {
		t.Fatal(err)
	}
	var err error
	for i := 0; i < 3 && err == nil; i++ {
		err = forbiddenAt(t, h, strict.URL())
	}
	if err == nil || !strings.Contains(err.Error(), `authorizing "api": stepping up: the server still answers 403 insufficient_scope after 2 new authorizations`) {
		t.Errorf("third step-up: %v", err)
	}
	if c := strict.Counts(); c.CodeGrants != 3 {
		t.Errorf("authorizations: %d, want 3 (the login and two step-ups)", c.CodeGrants)
	}
}

// TestStepUpForHeldScope: a server that asks for a scope the token
// already holds gets no new authorization: it would not help.
func TestStepUpForHeldScope(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{RequireScope: "admin", RefuseScope: true})
	h := newHandler(t, oauth.Config{Server: "api", URL: as.URL(), Scopes: []string{"admin"}}, credstore.NewFile(t.TempDir()), follow)
	if err := login(t, h, as.URL()); err != nil {
		t.Fatal(err)
	}
	err := forbiddenAt(t, h, as.URL())
	if err == nil || !strings.Contains(err.Error(), `authorizing "api": stepping up: the server answers 403 insufficient_scope and asks for admin, which the token already holds`) {
		t.Errorf("step-up for a held scope: %v", err)
	}
	if c := as.Counts(); c.CodeGrants != 1 {
		t.Errorf("authorizations: %d, want only the login", c.CodeGrants)
	}
}

// forbiddenAt sends the handler's token to u, expects 403, and returns
// what Authorize makes of it.
func forbiddenAt(t *testing.T, h *oauth.Handler, u string) error {
	t.Helper()
	ts, _ := h.TokenSource(t.Context())
	tok, _ := ts.Token()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, u, strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("HTTP %d, want 403", resp.StatusCode)
	}
	return h.Authorize(t.Context(), req, resp)
}

// TestHostile: a hostile or malformed answer at each step is an error
// naming the server and the step, and nothing is stored.
func TestHostile(t *testing.T) {
	tests := []struct {
		name string
		opts oauthtest.Options
		want string
	}{
		{"plain http authorization endpoint", oauthtest.Options{AuthorizationEndpoint: "http://auth.example.com/authorize"},
			`authorizing "api": reading the authorization server metadata: authorization_endpoint: URL "http://auth.example.com/authorize" does not use HTTPS`},
		{"not a bearer token", oauthtest.Options{TokenType: "mac"},
			`authorizing "api": exchanging the authorization code: the token endpoint issued a "mac" token; only Bearer tokens are supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := oauthtest.New(t, tt.opts)
			dir := t.TempDir()
			store := credstore.NewFile(dir)
			h := newHandler(t, oauth.Config{Server: "api", URL: as.URL()}, store, follow)
			err := login(t, h, as.URL())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if st, _ := oauth.Lookup(store, oauth.Config{Server: "api", URL: as.URL()}); st != nil {
				t.Errorf("a token was stored: %+v", st)
			}
			if strings.Contains(err.Error(), oauthtest.CanaryPrefix) {
				t.Errorf("the error holds a token: %v", err)
			}
		})
	}
}

// TestNoChallengeNoLogin: a 401 without a Bearer challenge (a server that
// may want an API key) starts no login from a connection, even with a
// Prompter; it says both ways out. auth login (Login) still tries.
func TestNoChallengeNoLogin(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	prompted := false
	prompt := func(context.Context, string, string) (string, error) { prompted = true; return "", nil }
	h := newHandler(t, oauth.Config{Server: "keyed", URL: srv.URL + "/mcp"}, credstore.NewFile(t.TempDir()), prompt)
	req, resp := unauthorized(t, srv.URL+"/mcp")
	err := h.Authorize(t.Context(), req, resp)
	if !errors.Is(err, oauth.ErrNeedsLogin) || prompted ||
		err.Error() != "needs-auth: the server answered HTTP 401 Unauthorized; hint: switchboard auth login keyed if it logs in with OAuth, else give it credentials in the server's headers" {
		t.Errorf("Authorize = %v (prompted %v)", err, prompted)
	}
}
