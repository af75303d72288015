package upstream_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// The canaries of the configured headers.
const (
	canaryToken = "CANARY-header-token"
	canaryKey   = "CANARY-api-key"
)

// canaryServer is an HTTP server at url whose headers hold the canaries.
func canaryServer(typ config.Transport, url string, redirects config.Redirects) (*config.Server, func(string) (string, bool)) {
	s := &config.Server{Name: "api", Type: typ, URL: url, Redirects: redirects, RequestTimeout: 20 * time.Second, ProtocolVersion: "auto",
		Headers: map[string]string{"Authorization": "Bearer ${TOKEN}", "X-Api-Key": "${KEY}"}}
	lookup := func(name string) (string, bool) {
		switch name {
		case "TOKEN":
			return canaryToken, true
		case "KEY":
			return canaryKey, true
		}
		return "", false
	}
	return s, lookup
}

func startServer(t *testing.T, h http.Handler) *httptest.Server {
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// TestRedirectRefused: a server that redirects to another origin (here the
// same address on another port, where Go's client keeps even the
// Authorization header) gets its call refused with an error that names
// both origins, and the other origin receives nothing, whatever the
// status of the redirect.
func TestRedirectRefused(t *testing.T) {
	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			catcher := hostile.NewCatcher(t)
			redirector := startServer(t, hostile.Redirect(code, catcher.URL))
			s, lookup := canaryServer(config.TransportHTTP, redirector.URL+"/mcp", "")
			h := newPool(t, []*config.Server{s}, &upstream.Options{Lookup: lookup})
			_, err := h.call(t.Context(), "api", "echo", map[string]any{"text": "hi"})
			want := fmt.Sprintf(`refusing the redirect from %s to %s: the server's headers and token go only to its own origin; hint: if you trust %s, make it the server's url, or set "redirects": "follow-without-credentials"`,
				redirector.URL, catcher.URL, catcher.URL)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v\nwant it to hold %q", err, want)
			}
			if got := catcher.Requests(); len(got) != 0 {
				t.Errorf("the other origin received %d requests, the first %s %s with %v", len(got), got[0].Method, got[0].URL, got[0].Header)
			}
		})
	}
}

// TestRedirectWithoutCredentials: with "redirects":
// "follow-without-credentials", a redirect to another origin is followed
// and the call answered there, without the server's headers.
func TestRedirectWithoutCredentials(t *testing.T) {
	for _, code := range []int{307, 308} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			catcher := hostile.NewCatcher(t)
			redirector := startServer(t, hostile.Redirect(code, catcher.URL))
			s, lookup := canaryServer(config.TransportHTTP, redirector.URL+"/mcp", config.RedirectsWithoutCredentials)
			h := newPool(t, []*config.Server{s}, &upstream.Options{Lookup: lookup})
			if got, err := h.call(t.Context(), "api", "echo", map[string]any{"text": "hi"}); err != nil || got != "hi" {
				t.Fatalf("call = %q, %v", got, err)
			}
			if len(catcher.Requests()) == 0 {
				t.Fatal("the redirect was not followed")
			}
			if leaked := catcher.Leaked(canaryToken, canaryKey); len(leaked) != 0 {
				t.Errorf("the other origin received %q", leaked)
			}
		})
	}
}

// TestRedirectSameOrigin: a redirect within the server's origin is
// followed with its headers.
func TestRedirectSameOrigin(t *testing.T) {
	ts := goServer(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path == "/old":
				http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
			case r.Header.Get("Authorization") != "Bearer "+canaryToken || r.Header.Get("X-Api-Key") != canaryKey:
				http.Error(w, "unauthorized", http.StatusUnauthorized)
			default:
				next.ServeHTTP(w, r)
			}
		})
	})
	s, lookup := canaryServer(config.TransportHTTP, ts.URL+"/old", "")
	h := newPool(t, []*config.Server{s}, &upstream.Options{Lookup: lookup})
	if got, err := h.call(t.Context(), "api", "echo", map[string]any{"text": "hi"}); err != nil || got != "hi" {
		t.Fatalf("call = %q, %v", got, err)
	}
}

// TestSSEForeignEndpoint: a legacy SSE server whose endpoint event names
// another origin is refused at once, and nothing is posted there.
func TestSSEForeignEndpoint(t *testing.T) {
	catcher := hostile.NewCatcher(t)
	sse := startServer(t, hostile.ForeignSSE(catcher.URL+"/messages?sessionid=1"))
	s, lookup := canaryServer(config.TransportSSE, sse.URL+"/sse", config.RedirectsWithoutCredentials)
	h := newPool(t, []*config.Server{s}, &upstream.Options{Lookup: lookup})
	_, err := h.call(t.Context(), "api", "echo", map[string]any{"text": "hi"})
	want := fmt.Sprintf("refusing the SSE endpoint %s: it is not on the server's origin %s, and a server's messages and credentials go only to its own origin", catcher.URL, sse.URL)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v\nwant it to hold %q", err, want)
	}
	if got := catcher.Requests(); len(got) != 0 {
		t.Errorf("the other origin received %d requests", len(got))
	}
}

// TestOAuthTokenStaysWithOrigin: once logged in, a server that redirects
// to another origin does not get its OAuth token sent there, over
// Streamable HTTP (go-sdk adds the token) and SSE (Switchboard does).
func TestOAuthTokenStaysWithOrigin(t *testing.T) {
	for _, typ := range []config.Transport{config.TransportHTTP, config.TransportSSE} {
		t.Run(string(typ), func(t *testing.T) {
			catcher := hostile.NewCatcher(t)
			var turned atomic.Bool
			as := oauthtest.New(t, oauthtest.Options{SSE: typ == config.TransportSSE, Wrap: func(next http.Handler) http.Handler {
				redirect := hostile.Redirect(http.StatusTemporaryRedirect, catcher.URL)
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if turned.Load() && r.URL.Path == "/mcp" {
						redirect.ServeHTTP(w, r)
						return
					}
					next.ServeHTTP(w, r)
				})
			}})
			s := &config.Server{Name: "api", Type: typ, URL: as.URL(), RequestTimeout: 20 * time.Second, ProtocolVersion: "auto"}
			h := newPool(t, []*config.Server{s}, &upstream.Options{Credentials: credstore.NewFile(t.TempDir())})
			if err := h.Login(t.Context(), "api", follow); err != nil {
				t.Fatal(err)
			}
			turned.Store(true)
			_, err := h.call(t.Context(), "api", "echo", map[string]any{"text": "hi"})
			if err == nil || !strings.Contains(err.Error(), "refusing the redirect from "+as.RS.URL+" to "+catcher.URL) {
				t.Errorf("err = %v", err)
			}
			if leaked := catcher.Leaked(oauthtest.CanaryPrefix); len(leaked) != 0 || len(catcher.Requests()) != 0 {
				t.Errorf("the other origin received %d requests, with %q", len(catcher.Requests()), leaked)
			}
		})
	}
}

// TestOAuthDiscoveryStaysOut: a server that looks public (its name does
// not resolve to a local address; the test's transport takes it to
// loopback) cannot send the login's discovery into the local network: not
// to a loopback address, not to localhost, not to a name that resolves to
// loopback when dialled (DNS rebinding). Nothing reaches the addresses it
// named. A server that is itself on loopback may (a local development
// server).
func TestOAuthDiscoveryStaysOut(t *testing.T) {
	catcher := hostile.NewCatcher(t)
	tlsCatcher := hostile.NewTLSCatcher(t)
	const path = "/.well-known/oauth-protected-resource"
	for _, tt := range []struct{ name, metadata, want string }{
		{"loopback address", catcher.URL + path, "refusing " + catcher.URL + ": it is a loopback address, and the MCP server mcp.example.com is not at one"},
		{"localhost", strings.Replace(catcher.URL, "127.0.0.1", "localhost", 1) + path, "it is a loopback address, and the MCP server mcp.example.com is not at one"},
		{"name of a loopback address", "https://internal.example.com" + path, "refusing internal.example.com: it resolved to 127.0.0.1, a loopback address, and the MCP server mcp.example.com is not at one"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewTLSServer(hostile.Challenge(tt.metadata))
			t.Cleanup(srv.Close)
			rt := hostile.Elsewhere(t, map[string]string{
				"mcp.example.com:443":      srv.Listener.Addr().String(),
				"internal.example.com:443": tlsCatcher.Listener.Addr().String(),
			})
			s := &config.Server{Name: "api", Type: config.TransportHTTP, URL: "https://mcp.example.com/mcp", RequestTimeout: 20 * time.Second, ProtocolVersion: "auto"}
			h := newPool(t, []*config.Server{s}, &upstream.Options{Credentials: credstore.NewFile(t.TempDir()), HTTPTransport: rt})
			err := h.Login(t.Context(), "api", follow)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant it to hold %q", err, tt.want)
			}
			if n := len(catcher.Requests()) + len(tlsCatcher.Requests()); n != 0 {
				t.Errorf("the local addresses received %d requests", n)
			}
		})
	}
	t.Run("server on loopback", func(t *testing.T) {
		local := hostile.NewCatcher(t)
		srv := startServer(t, hostile.Challenge(local.URL+path))
		s := &config.Server{Name: "api", Type: config.TransportHTTP, URL: srv.URL + "/mcp", RequestTimeout: 20 * time.Second, ProtocolVersion: "auto"}
		h := newPool(t, []*config.Server{s}, &upstream.Options{Credentials: credstore.NewFile(t.TempDir())})
		_ = h.Login(t.Context(), "api", follow) // the catcher's answer is no metadata
		if got := local.Requests(); len(got) == 0 || got[0].URL != path {
			t.Errorf("the local metadata was not asked for: %v", got)
		}
	})
}
