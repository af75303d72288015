package identity

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
)

const (
	testIssuer   = "https://login.example.com"
	testAudience = "https://sb.example.com/mcp"
	testToken    = "opaque-canary-token"
)

// introspector is a hostile (or honest) introspection endpoint: it checks
// the request is RFC 7662's and answers with answer.
func introspector(t *testing.T, answer func(w http.ResponseWriter)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		id, secret, ok := r.BasicAuth()
		if r.Method != http.MethodPost || !ok || id != "gw" || secret != "s3cret" ||
			r.PostFormValue("token") != testToken || r.PostFormValue("token_type_hint") != "access_token" {
			t.Errorf("introspection request: %s basic %v %q %q, form %v", r.Method, ok, id, secret, r.PostForm)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		answer(w)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func jsonAnswer(v map[string]any) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
}

func newIntrospecting(url string) *Verifier {
	cfg := &config.Identity{Issuer: testIssuer, Audience: testAudience, GroupsClaim: "groups",
		Introspection: &config.Introspection{URL: url, ClientID: "gw", ClientSecret: "${S}"}}
	return New(cfg, &Options{IntrospectionSecret: "s3cret"})
}

// good is an answer the gateway takes.
func good() map[string]any {
	return map[string]any{"active": true, "sub": "u1", "client_id": "app", "exp": time.Now().Add(time.Hour).Unix(),
		"iss": testIssuer, "aud": []string{"other", testAudience}, "groups": []string{"dev"}}
}

func with(m map[string]any, k string, v any) map[string]any {
	if v == nil {
		delete(m, k)
	} else {
		m[k] = v
	}
	return m
}

// TestIntrospectionAnswers: an opaque token is taken only on an answer
// that says active, names an expiry not passed, a subject, the issuer (or
// none) and this gateway in its audience; the user is its subject, client
// and groups. A broken endpoint (an error status, a huge answer, not
// JSON, a redirect) is ErrUnavailable, not a refusal of the token.
func TestIntrospectionAnswers(t *testing.T) {
	huge := func(w http.ResponseWriter) {
		fmt.Fprintf(w, `{"active": true, "sub": "u1", "exp": %d, "aud": %q, "pad": "`, time.Now().Add(time.Hour).Unix(), testAudience)
		w.Write([]byte(strings.Repeat("x", MaxIntrospectionBytes)))
		w.Write([]byte(`"}`))
	}
	for _, tt := range []struct {
		name   string
		answer func(http.ResponseWriter)
		want   error // nil: taken
	}{
		{"good", jsonAnswer(good()), nil},
		{"audience a string", jsonAnswer(with(good(), "aud", testAudience)), nil},
		{"no issuer", jsonAnswer(with(good(), "iss", nil)), nil},
		{"inactive", jsonAnswer(map[string]any{"active": false}), ErrToken},
		{"active a string", jsonAnswer(with(good(), "active", "true")), ErrToken},
		{"no exp", jsonAnswer(with(good(), "exp", nil)), ErrToken},
		{"exp a string", jsonAnswer(with(good(), "exp", "2099-01-01")), ErrToken},
		{"expired", jsonAnswer(with(good(), "exp", time.Now().Add(-Leeway-time.Minute).Unix())), ErrToken},
		{"not yet valid", jsonAnswer(with(good(), "nbf", time.Now().Add(Leeway+time.Hour).Unix())), ErrToken},
		{"another audience", jsonAnswer(with(good(), "aud", []string{"https://elsewhere.example/mcp"})), ErrToken},
		{"no audience", jsonAnswer(with(good(), "aud", nil)), ErrToken},
		{"another issuer", jsonAnswer(with(good(), "iss", "https://evil.example")), ErrToken},
		{"no subject", jsonAnswer(with(good(), "sub", nil)), ErrToken},
		{"huge", huge, ErrUnavailable},
		{"not json", func(w http.ResponseWriter) { w.Write([]byte("<html>")) }, ErrUnavailable},
		{"json null", func(w http.ResponseWriter) { w.Write([]byte("null")) }, ErrUnavailable},
		{"error status", func(w http.ResponseWriter) { http.Error(w, "down", http.StatusBadGateway) }, ErrUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := introspector(t, tt.answer)
			u, exp, err := newIntrospecting(srv.URL).Verify(t.Context(), testToken)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if u.Subject != "u1" || u.ClientID != "app" || len(u.Groups) != 1 || u.Groups[0] != "dev" || exp.IsZero() {
					t.Errorf("got user %+v, expiry %v", u, exp)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want an error matching %v", err, tt.want)
			}
			if strings.Contains(err.Error(), testToken) || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error repeats the token or the secret: %v", err)
			}
		})
	}
}

// TestIntrospectionRedirect: a redirect from the introspection endpoint
// is not followed: the token and the gateway's credentials go nowhere
// else.
func TestIntrospectionRedirect(t *testing.T) {
	var reached atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		jsonAnswer(good())(w)
	}))
	defer elsewhere.Close()
	srv, _ := introspector(t, func(w http.ResponseWriter) {
		w.Header().Set("Location", elsewhere.URL)
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	_, _, err := newIntrospecting(srv.URL).Verify(t.Context(), testToken)
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("got %v, want ErrUnavailable", err)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}
}

// TestIntrospectionShape: JWT-shaped tokens go the JWT way (an opaque
// token without introspection configured is refused with the reason);
// others are opaque.
func TestIntrospectionShape(t *testing.T) {
	for tok, jwt := range map[string]bool{
		"eyJh.eyJz.c2ln": true, "eyJh.eyJz.": true, "a.b": false, "a.b.c.d.e": false,
		"not-a-token": false, "a b.c.d": false, "YWJj": false, "": false,
	} {
		if got := isJWT(tok); got != jwt {
			t.Errorf("isJWT(%q) = %v, want %v", tok, got, jwt)
		}
	}
	v := New(&config.Identity{Issuer: testIssuer, Audience: testAudience}, nil)
	_, _, err := v.Verify(context.Background(), "opaque")
	if !errors.Is(err, ErrToken) || !strings.Contains(err.Error(), "settings.identity.introspection") {
		t.Errorf("an opaque token without introspection: got %v", err)
	}
}

// TestIntrospectionCache: a positive answer is kept (the second Verify
// does not ask), a negative one is not; kept answers are dropped at the
// token's expiry or after IntrospectionCacheTTL, the oldest out first
// beyond IntrospectionCacheSize.
func TestIntrospectionCache(t *testing.T) {
	srv, n := introspector(t, jsonAnswer(good()))
	v := newIntrospecting(srv.URL)
	for range 3 {
		if _, _, err := v.Verify(t.Context(), testToken); err != nil {
			t.Fatal(err)
		}
	}
	if got := n.Load(); got != 1 {
		t.Errorf("introspected %d times for 3 verifications, want 1", got)
	}

	inactive, m := introspector(t, jsonAnswer(map[string]any{"active": false}))
	w := newIntrospecting(inactive.URL)
	for range 2 {
		w.Verify(t.Context(), testToken)
	}
	if got := m.Load(); got != 2 {
		t.Errorf("an inactive answer: introspected %d times for 2 verifications, want 2", got)
	}

	var c answers
	now := time.Now()
	u := &User{Subject: "u"}
	key := func(i int) [sha256.Size]byte { return sha256.Sum256(fmt.Appendf(nil, "t%d", i)) }
	c.put(key(0), u, now.Add(10*time.Second), now)
	c.put(key(1), u, now.Add(time.Hour), now)
	if _, _, ok := c.get(key(0), now.Add(11*time.Second)); ok {
		t.Error("an answer is kept past its token's expiry")
	}
	if _, _, ok := c.get(key(1), now.Add(IntrospectionCacheTTL-time.Second)); !ok {
		t.Error("an answer is not kept within the TTL")
	}
	if _, _, ok := c.get(key(1), now.Add(IntrospectionCacheTTL)); ok {
		t.Error("an answer is kept past the TTL")
	}
	for i := range IntrospectionCacheSize + 1 {
		c.put(key(i), u, now.Add(time.Hour), now)
	}
	if c.order.Len() != IntrospectionCacheSize || len(c.byKey) != IntrospectionCacheSize {
		t.Errorf("the cache holds %d (%d), want %d", c.order.Len(), len(c.byKey), IntrospectionCacheSize)
	}
	if _, _, ok := c.get(key(0), now); ok {
		t.Error("the oldest answer was not dropped")
	}
	if _, _, ok := c.get(key(IntrospectionCacheSize), now); !ok {
		t.Error("the newest answer was dropped")
	}
}

// FuzzIntrospectionAnswer: no answer of an introspection endpoint makes
// the checks panic, and an answer they take is active, names a subject
// and this gateway in its audience, and has not expired.
func FuzzIntrospectionAnswer(f *testing.F) {
	b, _ := json.Marshal(good())
	f.Add(b)
	f.Add([]byte(`{"active": true, "exp": 1e300, "sub": "x", "aud": ["` + testAudience + `", 1, null]}`))
	f.Add([]byte(`{"active": true, "exp": -1e300, "nbf": 1e300, "sub": "", "aud": {"a": 1}, "groups": [[], {}]}`))
	v := newIntrospecting("http://127.0.0.1:9")
	f.Fuzz(func(t *testing.T, data []byte) {
		var ans map[string]any
		if json.Unmarshal(data, &ans) != nil || ans == nil {
			return
		}
		now := time.Now()
		u, exp, err := v.accept(ans, now)
		if err != nil {
			if !errors.Is(err, ErrToken) {
				t.Fatalf("a refusal that is not ErrToken: %v", err)
			}
			return
		}
		if ans["active"] != true || u.Subject == "" || !now.Before(exp.Add(Leeway)) || !slices.Contains(claimStrings(ans["aud"]), testAudience) {
			t.Fatalf("took %s: user %+v, expiry %v", data, u, exp)
		}
	})
}
