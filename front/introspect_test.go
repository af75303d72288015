package front

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/internal/testkit/idptest"
	"github.com/switchboard-mcp/switchboard/policy"
)

// introspectionSecretVar holds the introspection client's secret in the
// tests' engine lookup.
const introspectionSecretVar = "SB_TEST_INTROSPECTION_SECRET"

// introspectionEngine looks up the introspection client's secret.
func introspectionEngine() switchboard.Options {
	return switchboard.Options{Lookup: func(name string) (string, bool) {
		if name == introspectionSecretVar {
			return idptest.IntrospectorSecret, true
		}
		return "", false
	}}
}

// introspectingGateway is newIdentityGateway with
// settings.identity.introspection: the provider's introspection endpoint
// at url(issuer), or its discovery document's when url is nil.
func introspectingGateway(t *testing.T, url func(issuer string) string) *identityGateway {
	t.Helper()
	return newIdentityGatewayOpts(t, identityOpts{engine: introspectionEngine(), introspection: func(issuer string) map[string]any {
		in := map[string]any{"clientId": idptest.IntrospectorID, "clientSecret": "${" + introspectionSecretVar + "}"}
		if url != nil {
			in["url"] = url(issuer)
		}
		return in
	}})
}

// countingProxy is a real server in front of the provider's introspection
// endpoint that counts the requests it passes on.
func countingProxy(t *testing.T) (at func(issuer string) string, count *atomic.Int32) {
	t.Helper()
	count = &atomic.Int32{}
	var target atomic.Pointer[string]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count.Add(1)
		u, _ := url.Parse(*target.Load())
		httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return func(issuer string) string {
		target.Store(&issuer)
		return srv.URL + "/oauth/introspect"
	}, count
}

// get sends GET path with token and returns the answer's status, its
// WWW-Authenticate, and its body.
func (ig *identityGateway) get(t *testing.T, token, path string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", ig.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}

// TestIntrospection: opaque access tokens of a real provider, checked at
// its introspection endpoint (found by discovery): each user is named by
// their token and gets what the rules grant their groups; inactive
// tokens (unknown, revoked, expired) and one for another resource are
// refused with 401 and a WWW-Authenticate a client can follow.
func TestIntrospection(t *testing.T) {
	ig := introspectingGateway(t, nil)
	alpha := ig.connectAs(t, ig.idp.OpaqueToken(t, idptest.Alpha, idptest.Password))
	beta := ig.connectAs(t, ig.idp.OpaqueToken(t, idptest.Beta, idptest.Password))
	checkGrants(t, []grantCase{
		{"alpha calls a", alpha, "a", true},
		{"alpha calls b", alpha, "b", false},
		{"beta calls b", beta, "b", true},
		{"beta calls a", beta, "a", false},
	})
	recs, _, err := policy.ReadAudit(filepath.Join(ig.g.srv.cfg.Dirs.StateDir(), policy.AuditFile), policy.Filter{User: idptest.AlphaSub})
	if err != nil {
		t.Fatal(err)
	}
	var called bool
	for _, r := range recs {
		if r.Event == policy.EventCall && r.Server == "a" && r.Decision == "allowed" {
			called = true
			if r.User != idptest.AlphaSub || r.ClientID != "switchboard-test-opaque" {
				t.Errorf("record names user %q, client id %q; want %s, switchboard-test-opaque", r.User, r.ClientID, idptest.AlphaSub)
			}
		}
	}
	if !called {
		t.Errorf("no audit record of alpha's call of a: %+v", recs)
	}

	revoked := ig.idp.OpaqueToken(t, idptest.Alpha, idptest.Password)
	ig.idp.Revoke(t, revoked)
	for _, tt := range []struct{ name, token string }{
		{"unknown", "bm90LWEtdG9rZW4tb2YtdGhpcy1wcm92aWRlcg"},
		{"garbage", "not-a-token"},
		{"revoked", revoked},
		{"expired", ig.idp.OpaqueToken(t, idptest.Alpha, idptest.Password, idptest.ScopeExpired)},
		{"another resource", ig.idp.OpaqueToken(t, idptest.Alpha, idptest.Password, idptest.ScopeElsewhere)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/mcp", "/admin/calls"} {
				code, challenge, body := ig.get(t, tt.token, path)
				if code != http.StatusUnauthorized {
					t.Fatalf("%s: got %d %s, want 401", path, code, body)
				}
				followMetadata(t, challenge, ig.url+"/mcp", ig.idp.Issuer)
			}
		})
	}
}

// TestIntrospectionCached: a second request with the same opaque token is
// not introspected again (the requests are counted by a real server in
// front of the provider's endpoint, which settings.identity.introspection
// .url names); another token is.
func TestIntrospectionCached(t *testing.T) {
	at, count := countingProxy(t)
	ig := introspectingGateway(t, at)
	tok := ig.idp.OpaqueToken(t, idptest.Alpha, idptest.Password) // in admins
	for i := range 3 {
		if code, _, body := ig.get(t, tok, "/admin/calls"); code != http.StatusOK {
			t.Fatalf("request %d: got %d %s, want 200", i, code, body)
		}
	}
	if n := count.Load(); n != 1 {
		t.Errorf("3 requests with one token introspected it %d times, want 1", n)
	}
	ig.get(t, ig.idp.OpaqueToken(t, idptest.Alpha, idptest.Password), "/admin/calls")
	if n := count.Load(); n != 2 {
		t.Errorf("another token: %d introspections in all, want 2", n)
	}
}

// TestIntrospectionUnconfigured: without settings.identity.introspection
// an opaque token is refused with 401, saying why.
func TestIntrospectionUnconfigured(t *testing.T) {
	ig := newIdentityGateway(t)
	code, challenge, body := ig.get(t, ig.idp.OpaqueToken(t, idptest.Alpha, idptest.Password), "/admin/calls")
	if code != http.StatusUnauthorized || !strings.Contains(body, "it is not a JWT") || !strings.Contains(body, "settings.identity.introspection") {
		t.Errorf("got %d %q, want 401 saying the gateway takes JWTs only", code, body)
	}
	followMetadata(t, challenge, ig.url+"/mcp", ig.idp.Issuer)
}

// TestIntrospectionUnavailable: when the introspection endpoint is down
// the answer is 503 with a Retry-After, not 401: the token may be good, and the client must
// not be sent to sign in again. The answer does not name the endpoint.
func TestIntrospectionUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/introspect"
	ln.Close()
	ig := introspectingGateway(t, func(string) string { return down })
	req, _ := http.NewRequest("GET", ig.url+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+ig.idp.OpaqueToken(t, idptest.Alpha, idptest.Password))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	code, challenge, body := resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
	if code != http.StatusServiceUnavailable || challenge != "" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("got %d (WWW-Authenticate %q, Retry-After %q) %s, want 503 with a Retry-After, without a challenge", code, challenge, resp.Header.Get("Retry-After"), body)
	}
	if !strings.Contains(body, "could not check the access token") || strings.Contains(body, ln.Addr().String()) {
		t.Errorf("body %q: want the reason, without the endpoint's address", body)
	}
}

// TestIntrospectionHostile: an introspection endpoint that answers
// "active": true with a huge body is a failure of the endpoint (503);
// one without "exp", or for another audience, is a refusal (401).
func TestIntrospectionHostile(t *testing.T) {
	var answer atomic.Pointer[func(http.ResponseWriter)]
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*answer.Load())(w) }))
	defer hostile.Close()
	ig := introspectingGateway(t, func(string) string { return hostile.URL })
	exp := time.Now().Add(time.Hour).Unix()
	jsonOf := func(v map[string]any) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) { json.NewEncoder(w).Encode(v) }
	}
	for _, tt := range []struct {
		name   string
		answer func(http.ResponseWriter)
		code   int
	}{
		{"huge", func(w http.ResponseWriter) {
			fmt.Fprintf(w, `{"active": true, "sub": "id1", "exp": %d, "aud": %q, "groups": ["admins"], "pad": "`, exp, ig.url+"/mcp")
			w.Write([]byte(strings.Repeat("x", 2<<20)))
			w.Write([]byte(`"}`))
		}, http.StatusServiceUnavailable},
		{"no exp", jsonOf(map[string]any{"active": true, "sub": "id1", "aud": ig.url + "/mcp", "groups": []string{"admins"}}), http.StatusUnauthorized},
		{"another audience", jsonOf(map[string]any{"active": true, "sub": "id1", "exp": exp, "aud": []string{"https://elsewhere.example/mcp"}, "groups": []string{"admins"}}), http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			answer.Store(&tt.answer)
			code, _, body := ig.get(t, "hostile-"+strings.ReplaceAll(tt.name, " ", "-"), "/admin/calls")
			if code != tt.code {
				t.Errorf("got %d %s, want %d", code, body, tt.code)
			}
		})
	}
}
