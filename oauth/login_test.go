package oauth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// TestListenerState: the loopback listener refuses a redirect whose state
// is not the login's, and keeps waiting; it takes the matching one, and
// answers later ones 410 Gone.
func TestListenerState(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{})
	var redirect string
	var wrong int
	prompt := func(ctx context.Context, _, authURL string) (string, error) {
		u, _ := url.Parse(authURL)
		redirect = u.Query().Get("redirect_uri")
		resp, err := http.Get(redirect + "?code=forged&state=not-it")
		if err != nil {
			return "", err
		}
		resp.Body.Close()
		wrong = resp.StatusCode
		return follow(ctx, "", authURL)
	}
	h := newHandler(t, oauth.Config{Server: "api", URL: as.URL()}, credstore.NewFile(t.TempDir()), prompt)
	if err := login(t, h, as.URL()); err != nil {
		t.Fatal(err)
	}
	if wrong != http.StatusBadRequest {
		t.Errorf("a redirect with another state: HTTP %d, want 400", wrong)
	}
	if !strings.HasPrefix(redirect, "http://127.0.0.1:") {
		t.Errorf("redirect URI %q, want loopback", redirect)
	}
	if _, err := http.Get(redirect + "?code=x"); err == nil {
		t.Errorf("the listener still answers after the login")
	}
}

// TestPastedRedirect: with a browser elsewhere, the user pastes the URL the
// browser was redirected to; a URL of another login is refused.
func TestPastedRedirect(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	paste := func(tamper bool) oauth.Prompter {
		return func(ctx context.Context, _, authURL string) (string, error) {
			resp, err := noFollow.Get(authURL)
			if err != nil {
				return "", err
			}
			resp.Body.Close()
			loc := resp.Header.Get("Location")
			if tamper {
				loc = strings.Replace(loc, "state=", "state=x", 1)
			}
			return loc, nil
		}
	}
	store := credstore.NewFile(t.TempDir())
	h := newHandler(t, oauth.Config{Server: "api", URL: as.URL()}, store, paste(false))
	if err := login(t, h, as.URL()); err != nil {
		t.Fatal(err)
	}
	if code := withToken(t, h, as.URL()); code != http.StatusOK {
		t.Errorf("with the token from the pasted redirect: HTTP %d", code)
	}
	h = newHandler(t, oauth.Config{Server: "api", URL: as.URL()}, credstore.NewFile(t.TempDir()), paste(true))
	err := login(t, h, as.URL())
	if err == nil || !strings.Contains(err.Error(), `authorizing "api": reading the pasted redirect: it is not the redirect of this login: its state does not match`) {
		t.Errorf("a pasted redirect of another login: %v", err)
	}
}

// TestIssuer checks the iss parameter of the redirect (RFC 9207).
func TestIssuer(t *testing.T) {
	tests := []struct {
		name      string
		advertise bool
		iss       string
		want      string // "" for success
	}{
		{"advertised and right", true, "issuer", ""},
		{"not advertised, not sent", false, "", ""},
		{"advertised, missing", true, "", "the authorization server promises an iss parameter (RFC 9207) and the redirect has none"},
		{"wrong issuer", true, "https://evil.example", `the redirect comes from issuer "https://evil.example"`},
		{"not advertised, sent", false, "issuer", "the redirect carries an iss parameter the authorization server does not advertise"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := oauthtest.New(t, oauthtest.Options{AdvertiseIss: tt.advertise, Iss: tt.iss})
			store := credstore.NewFile(t.TempDir())
			err := login(t, newHandler(t, oauth.Config{Server: "api", URL: as.URL()}, store, follow), as.URL())
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("err = %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), `authorizing "api": checking the authorization response: `+tt.want)):
				t.Errorf("err = %v, want %q", err, tt.want)
			case tt.want != "" && as.Counts().CodeGrants != 0:
				t.Errorf("the code was exchanged after a mix-up")
			}
		})
	}
}

// TestHostileResponses: a malformed registration or metadata answer is an
// error naming the server and the step; nothing is stored.
func TestHostileResponses(t *testing.T) {
	tests := []struct {
		name string
		opts oauthtest.Options
		want string
	}{
		{"client_id with a line break", oauthtest.Options{RegistrationBody: `{"client_id":"a\r\nInjected: yes"}`},
			`authorizing "api": registering the client: the registration response's client_id is empty`},
		{"registration without client_id", oauthtest.Options{RegistrationBody: `{"client_secret":"x"}`},
			`authorizing "api": registering the client: registration response is missing required 'client_id' field`},
		{"registration not JSON", oauthtest.Options{RegistrationBody: `<html>`},
			`authorizing "api": registering the client: failed to decode successful registration response`},
		{"unknown token endpoint authentication", oauthtest.Options{RegistrationBody: `{"client_id":"c","token_endpoint_auth_method":"private_key_jwt"}`},
			`authorizing "api": registering the client: the registration response asks for token endpoint authentication "private_key_jwt"`},
		{"metadata for another resource", oauthtest.Options{PRMResource: "https://elsewhere.example/mcp"},
			`authorizing "api": reading the protected resource metadata: `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := oauthtest.New(t, tt.opts)
			store := credstore.NewFile(t.TempDir())
			err := login(t, newHandler(t, oauth.Config{Server: "api", URL: as.URL()}, store, follow), as.URL())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if keys, _ := store.Keys(""); len(keys) != 0 {
				t.Errorf("stored %v", keys)
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("the error holds a line break: %q", err)
			}
		})
	}
}

// legacyServer is a server of the 2025-03-26 revision: no protected
// resource metadata, its authorization server at its origin, with metadata
// whose issuer is issuer (a path under the origin, or another origin).
func legacyServer(t *testing.T, issuer func(base string) string, withMetadata bool) *httptest.Server {
	var base string
	token := oauthtest.CanaryPrefix + "legacy"
	mux := http.NewServeMux()
	if withMetadata {
		mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{
				"issuer": issuer(base), "authorization_endpoint": base + "/oauth/authorize", "token_endpoint": base + "/oauth/token",
				"registration_endpoint": base + "/oauth/register", "response_types_supported": []string{"code"},
				"code_challenge_methods_supported": []string{"S256"},
			})
		})
	}
	prefix := "/oauth"
	if !withMetadata {
		prefix = ""
	}
	mux.HandleFunc("POST "+prefix+"/register", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"client_id":"legacy-client"}`)
	})
	mux.HandleFunc("GET "+prefix+"/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		http.Redirect(w, r, q.Get("redirect_uri")+"?code=c&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
	})
	mux.HandleFunc("POST "+prefix+"/token", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":3600}`, token)
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	base = ts.URL
	return ts
}

// TestLegacyDiscovery: a 2025-03-26 server without protected resource
// metadata logs in at its origin: with metadata whose issuer is a path of
// the origin, and with the default endpoints when it has no metadata;
// metadata naming an issuer on another origin is refused.
func TestLegacyDiscovery(t *testing.T) {
	for _, tt := range []struct {
		name     string
		issuer   func(string) string
		metadata bool
		want     string
	}{
		{"issuer under the origin", func(b string) string { return b + "/oauth" }, true, ""},
		{"default endpoints", nil, false, ""},
		{"issuer elsewhere", func(string) string { return "https://evil.example" }, true,
			`authorizing "api": reading the authorization server metadata: the metadata at `},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := legacyServer(t, tt.issuer, tt.metadata)
			store := credstore.NewFile(t.TempDir())
			h := newHandler(t, oauth.Config{Server: "api", URL: ts.URL + "/mcp"}, store, follow)
			err := login(t, h, ts.URL+"/mcp")
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want == "":
				if code := withToken(t, h, ts.URL+"/mcp"); code != http.StatusOK {
					t.Errorf("with the token: HTTP %d", code)
				}
			case err == nil || !strings.Contains(err.Error(), tt.want):
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
