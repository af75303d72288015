package oauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// exchangeAS is a protected resource (/mcp, which answers 401 with its
// metadata) and its authorization server, whose token endpoint records
// each request and answers with answer. It is an honest stand-in for
// the token endpoint of RFC 8693; internal/testkit/idp is the real one.
type exchangeAS struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests []url.Values
	users    []string // the basic authentication of each request
	answer   func(form url.Values) (int, any)
}

func newExchangeAS(t *testing.T, answer func(form url.Values) (int, any)) *exchangeAS {
	as := &exchangeAS{answer: answer}
	mux := http.NewServeMux()
	as.srv = httptest.NewServer(mux)
	t.Cleanup(as.srv.Close)
	base := as.srv.URL
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	writeJSON := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"issuer": base, "token_endpoint": base + "/token", "authorization_endpoint": base + "/authorize",
			"grant_types_supported":    []string{"authorization_code", "urn:ietf:params:oauth:grant-type:token-exchange"},
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		id, secret, _ := r.BasicAuth()
		as.mu.Lock()
		as.requests = append(as.requests, r.PostForm)
		as.users = append(as.users, id+":"+secret)
		as.mu.Unlock()
		code, body := as.answer(r.PostForm)
		writeJSON(w, code, body)
	})
	return as
}

func (as *exchangeAS) seen() ([]url.Values, []string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	return append([]url.Values(nil), as.requests...), append([]string(nil), as.users...)
}

// subjectHolder is the user's current token to the gateway.
type subjectHolder struct {
	mu  sync.Mutex
	tok string
}

func (s *subjectHolder) get() string { s.mu.Lock(); defer s.mu.Unlock(); return s.tok }
func (s *subjectHolder) set(v string) {
	s.mu.Lock()
	s.tok = v
	s.mu.Unlock()
}

func exchangeConfig(as *exchangeAS, subject *subjectHolder) oauth.Config {
	return oauth.Config{Server: "api", URL: as.srv.URL + "/mcp", Grant: oauth.GrantTokenExchange, ClientID: "gw", ClientSecret: "gw-secret",
		User: "alice", Audience: "urn:example:api", Scopes: []string{"read"}, SubjectToken: subject.get}
}

// TestTokenExchangeRequest: the exchange posts RFC 8693's parameters (the
// user's token as an access token, for an access token, with the
// resource, the audience and the scopes), authenticated as the gateway's
// client; its token is the user's, stored under the user; an expired one
// is exchanged again with the user's current token (there is no refresh
// token).
func TestTokenExchangeRequest(t *testing.T) {
	n := 0
	as := newExchangeAS(t, func(form url.Values) (int, any) {
		n++
		// The first token has already expired; the second has not.
		exp := -10
		if n > 1 {
			exp = 3600
		}
		return 200, map[string]any{"access_token": "upstream-" + form.Get("subject_token"), "token_type": "Bearer", "expires_in": exp,
			"issued_token_type": "urn:ietf:params:oauth:token-type:access_token"}
	})
	subject := &subjectHolder{tok: "gateway-token-1"}
	store := credstore.NewFile(filepath.Join(t.TempDir(), "credentials"))
	h := newHandler(t, exchangeConfig(as, subject), store, nil)
	if err := login(t, h, as.srv.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	reqs, users := as.seen()
	if len(reqs) != 1 {
		t.Fatalf("%d token requests, want 1", len(reqs))
	}
	want := url.Values{
		"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token":        {"gateway-token-1"},
		"subject_token_type":   {"urn:ietf:params:oauth:token-type:access_token"},
		"requested_token_type": {"urn:ietf:params:oauth:token-type:access_token"},
		"resource":             {as.srv.URL + "/mcp"},
		"audience":             {"urn:example:api"},
		"scope":                {"read"},
	}
	for k, v := range want {
		if got := reqs[0][k]; len(got) != 1 || got[0] != v[0] {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if users[0] != "gw:gw-secret" {
		t.Errorf("the client authenticated as %q, want gw (client_secret_basic)", users[0])
	}

	// The stored token has expired: the user's current token is
	// exchanged again.
	subject.set("gateway-token-2")
	ts, err := h.TokenSource(t.Context())
	if err != nil || ts == nil {
		t.Fatalf("TokenSource: %v %v", ts, err)
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != "upstream-gateway-token-2" {
		t.Errorf("after expiry the token is %q, want the exchange of the user's current token", tok.AccessToken)
	}
	reqs, _ = as.seen()
	if len(reqs) != 2 || reqs[1].Get("grant_type") != want.Get("grant_type") || reqs[1].Get("subject_token") != "gateway-token-2" {
		t.Errorf("the second request: %v", reqs)
	}
	// Reused until it expires.
	if tok, err := ts.Token(); err != nil || tok.AccessToken != "upstream-gateway-token-2" {
		t.Errorf("the next token: %v %v", tok, err)
	}
	if reqs, _ := as.seen(); len(reqs) != 2 {
		t.Errorf("%d token requests, want 2: a fresh token is reused", len(reqs))
	}
	keys, _ := store.Keys("oauth/api/")
	for _, k := range keys {
		if strings.HasSuffix(k, "/token") && !strings.Contains(k, "/user/") {
			t.Errorf("a shared token is stored: %s", k)
		}
	}
}

// TestTokenExchangeRefusedRedacted: an exchange the authorization server
// refuses is needs-auth for the user, saying why, and never a login; the
// user's token, which a hostile server echoes in its error, is in no
// error and no log line.
func TestTokenExchangeRefusedRedacted(t *testing.T) {
	const canary = "gateway-token-canary-7f3a"
	for _, tt := range []struct {
		name      string
		code      int
		errCode   string
		needsAuth bool
	}{
		{"invalid_grant", 400, "invalid_grant", true},
		{"unauthorized_client", 400, "unauthorized_client", true},
		{"server error", 500, "server_error", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			as := newExchangeAS(t, func(form url.Values) (int, any) {
				return tt.code, map[string]any{"error": tt.errCode, "error_description": "cannot exchange " + form.Get("subject_token")}
			})
			var logs bytes.Buffer
			h, err := oauth.New(exchangeConfig(as, &subjectHolder{tok: canary}), &oauth.Options{
				Store:  credstore.NewFile(filepath.Join(t.TempDir(), "credentials")),
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				Prompt: func(ctx context.Context, server, authURL string) (string, error) {
					t.Errorf("a login was started: %s", authURL)
					return "", errors.New("no")
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			err = login(t, h, as.srv.URL+"/mcp")
			if err == nil {
				t.Fatal("the refused exchange succeeded")
			}
			if got := errors.Is(err, oauth.ErrNeedsLogin); got != tt.needsAuth {
				t.Errorf("needs-auth: got %v, want %v: %v", got, tt.needsAuth, err)
			}
			if !strings.Contains(err.Error(), tt.errCode) {
				t.Errorf("the error does not say why: %v", err)
			}
			if tt.needsAuth && (!strings.Contains(err.Error(), "refused to exchange your token") || strings.Contains(err.Error(), "auth login")) {
				t.Errorf("the error: %v, want the refusal, without a login hint", err)
			}
			if strings.Contains(err.Error(), canary) || strings.Contains(logs.String(), canary) {
				t.Errorf("the user's token is in the error or the log: %v\n%s", err, logs.String())
			}
		})
	}
}

// TestTokenExchangeNeedsUser: the grant is refused for a connection with
// no signed-in user.
func TestTokenExchangeNeedsUser(t *testing.T) {
	_, err := oauth.New(oauth.Config{Server: "api", URL: "https://api.example.com/mcp", Grant: oauth.GrantTokenExchange, ClientID: "gw", ClientSecret: "s"},
		&oauth.Options{Store: credstore.NewFile(filepath.Join(t.TempDir(), "c"))})
	if err == nil || !strings.Contains(err.Error(), "this connection has no user") {
		t.Errorf("got %v, want the grant refused without a user", err)
	}
}

// TestTokenExchangeOnce: requests that meet the server's 401 at once, as
// a connection's first requests do, make one exchange and share its
// token.
func TestTokenExchangeOnce(t *testing.T) {
	as := newExchangeAS(t, func(form url.Values) (int, any) {
		return 200, map[string]any{"access_token": "upstream-token", "token_type": "Bearer", "expires_in": 3600}
	})
	h := newHandler(t, exchangeConfig(as, &subjectHolder{tok: "gateway-token"}), credstore.NewFile(filepath.Join(t.TempDir(), "credentials")), nil)
	const n = 8
	type refused struct {
		req  *http.Request
		resp *http.Response
	}
	var answers []refused
	for range n {
		req, resp := unauthorized(t, as.srv.URL+"/mcp")
		answers = append(answers, refused{req, resp})
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, a := range answers {
		wg.Go(func() { errs <- h.Authorize(t.Context(), a.req, a.resp) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if reqs, _ := as.seen(); len(reqs) != 1 {
		t.Errorf("%d exchanges, want 1", len(reqs))
	}
}
