package oauth_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode"

	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// challenge asks the server at u without a token, through client, and
// returns its answer, a 401.
func challenge(t *testing.T, client *http.Client, u string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, u, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the server answered %d without a token, want 401", resp.StatusCode)
	}
	return resp
}

// TestPKCERequired: a login refuses an authorization server that does not
// offer PKCE with S256: one whose metadata lists other methods, and one,
// named by protected resource metadata, that publishes no metadata at all.
// The browser is never sent there and no token is asked for.
func TestPKCERequired(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts hostile.AuthServerOptions
		want string // "" for a login that goes through
	}{
		{"no metadata", hostile.AuthServerOptions{NoMetadata: true},
			"/as publishes no metadata (RFC 8414) listing code_challenge_methods_supported, so nothing says it supports PKCE with S256, which a login requires"},
		{"plain only", hostile.AuthServerOptions{PKCE: []string{"plain"}},
			"its metadata lists code_challenge_methods_supported plain, without S256, which a login requires (PKCE, RFC 7636)"},
		{"S256", hostile.AuthServerOptions{PKCE: []string{"plain", "S256"}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			as := hostile.NewAuthServer(t, tt.opts)
			store := credstore.NewFile(t.TempDir())
			h := newHandler(t, oauth.Config{Server: "api", URL: as.MCP()}, store, follow)
			err := h.Login(t.Context(), challenge(t, http.DefaultClient, as.MCP()))
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want == "":
				return
			case err == nil || !strings.Contains(err.Error(), `authorizing "api": checking the authorization server: `) || !strings.Contains(err.Error(), tt.want):
				t.Errorf("err = %v\nwant it to hold %q", err, tt.want)
			}
			if n := as.Reached("authorize") + as.Reached("token") + as.Reached("register"); n != 0 {
				t.Errorf("the authorization server was reached %d times", n)
			}
		})
	}
}

// TestServerTextWithoutControls: what an authorization server writes into
// its metadata reaches the login's error, which the CLI prints on a
// terminal, without a control character: no escape, no one-byte CSI
// (U+009B, a C1 control) and no line or paragraph separator, so the server
// can neither drive the terminal nor fake a line of its own.
func TestServerTextWithoutControls(t *testing.T) {
	as := hostile.NewAuthServer(t, hostile.AuthServerOptions{PKCE: []string{"plain\u009b2J\x1b[31m\u2028fake: ok\u2029"}})
	h := newHandler(t, oauth.Config{Server: "api", URL: as.MCP()}, credstore.NewFile(t.TempDir()), follow)
	err := h.Login(t.Context(), challenge(t, http.DefaultClient, as.MCP()))
	if err == nil {
		t.Fatal("a login against a server without S256 went through")
	}
	for _, r := range err.Error() {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			t.Errorf("the error holds %U: %q", r, err)
		}
	}
	if want := "code_challenge_methods_supported plain2J[31mfake: ok, without S256"; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %q\nwant it to hold %q", err, want)
	}
}

// TestTokenRedirect: a token endpoint that redirects to another origin
// (the same address on another port, where Go's client keeps even the
// Authorization header) does not get the client secret, the code or the
// verifier sent there: with the client_credentials grant and with a login.
func TestTokenRedirect(t *testing.T) {
	const secret = "CANARY-client-secret"
	for _, tt := range []struct {
		name string
		cfg  oauth.Config
	}{
		{"client_credentials", oauth.Config{Grant: oauth.GrantClientCredentials, ClientID: "cc", ClientSecret: secret}},
		{"authorization_code", oauth.Config{ClientID: "pre", ClientSecret: secret}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			catcher := hostile.NewCatcher(t)
			as := hostile.NewAuthServer(t, hostile.AuthServerOptions{PKCE: []string{"S256"}, TokenRedirect: catcher.URL})
			cfg := tt.cfg
			cfg.Server, cfg.URL = "api", as.MCP()
			h := newHandler(t, cfg, credstore.NewFile(t.TempDir()), follow)
			err := h.Login(t.Context(), challenge(t, http.DefaultClient, as.MCP()))
			want := fmt.Sprintf("refusing the redirect of a POST from %s to %s: it carries client credentials, a code or a token, which go only to the origin they were sent to", as.URL, catcher.URL)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v\nwant it to hold %q", err, want)
			}
			if as.Reached("token") != 1 {
				t.Errorf("the token endpoint was reached %d times, want 1", as.Reached("token"))
			}
			if got := catcher.Requests(); len(got) != 0 {
				t.Errorf("the other origin received %d requests, leaking %q", len(got), catcher.Leaked(secret, "hostile-code", "code_verifier"))
			}
		})
	}
}

// A public is an MCP server at https://mcp.example.com, reached on
// loopback through the transport of its client (see hostile.Elsewhere):
// its name resolves nowhere here, so Switchboard takes it for a server on
// the internet.
type public struct {
	// resourceMetadata is its challenge's; "" for its own protected
	// resource metadata, which names issuer.
	resourceMetadata, issuer string
	// asMetadata, if set, is published as the metadata of the issuer
	// https://mcp.example.com.
	asMetadata map[string]any
	// movedTo is where /moved redirects (302).
	movedTo string
}

const self = "https://mcp.example.com"

// start starts the server and returns a client that reaches it, and the
// other names of hosts ("name:port") at the addresses given.
func (p public) start(t *testing.T, hosts map[string]string) *http.Client {
	mux := http.NewServeMux()
	if p.resourceMetadata == "" {
		p.resourceMetadata = self + "/.well-known/oauth-protected-resource/mcp"
	}
	mux.Handle("/mcp", hostile.Challenge(p.resourceMetadata))
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"resource": self + "/mcp", "authorization_servers": []string{p.issuer}})
	})
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		if p.asMetadata == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(p.asMetadata)
	})
	if p.movedTo != "" {
		mux.Handle("/moved", http.RedirectHandler(p.movedTo, http.StatusFound))
	}
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	all := map[string]string{"mcp.example.com:443": srv.Listener.Addr().String()}
	for k, v := range hosts {
		all[k] = v
	}
	return &http.Client{Transport: hostile.Elsewhere(t, all)}
}

// TestDiscoveryGuard: a server that looks public cannot make a login or a
// client_credentials grant reach into the local network through any URL
// discovery learns: the challenge's resource_metadata, the authorization
// server its metadata names, the token endpoint that one names, a
// redirect, a name that resolves to loopback when dialled. Addresses
// discovery refused reach no one.
func TestDiscoveryGuard(t *testing.T) {
	catcher := hostile.NewCatcher(t)
	tlsCatcher := hostile.NewTLSCatcher(t)
	internal := map[string]string{"internal.example.com:443": tlsCatcher.Listener.Addr().String()}
	metadata := func(token string) map[string]any {
		return map[string]any{"issuer": self, "authorization_endpoint": self + "/authorize", "token_endpoint": token,
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			"grant_types_supported": []string{"client_credentials"}, "token_endpoint_auth_methods_supported": []string{"client_secret_post"}}
	}
	loopback := "refusing " + catcher.URL + ": it is a loopback address, and the MCP server mcp.example.com is not at one: a server's OAuth requests reach into the local network only when it is there itself"
	rebound := "refusing internal.example.com: it resolved to 127.0.0.1, a loopback address, and the MCP server mcp.example.com is not at one"
	for _, tt := range []struct {
		name   string
		server public
		want   string
	}{
		{"resource metadata on loopback", public{resourceMetadata: catcher.URL + "/prm"}, loopback},
		{"resource metadata on a name of loopback", public{resourceMetadata: "https://internal.example.com/prm"}, rebound},
		{"resource metadata at the cloud metadata service", public{resourceMetadata: "https://169.254.169.254/latest/meta-data"}, "169.254.169.254"},
		{"resource metadata on a private address", public{resourceMetadata: "https://10.0.0.1/prm"}, "10.0.0.1"},
		{"resource metadata redirected to loopback", public{resourceMetadata: self + "/moved", movedTo: tlsCatcher.URL + "/prm"},
			"refusing " + tlsCatcher.URL + ": it is a loopback address"},
		{"authorization server on loopback", public{issuer: catcher.URL}, loopback},
		{"authorization server on a name of loopback", public{issuer: "https://internal.example.com"}, rebound},
		{"token endpoint on loopback", public{issuer: self, asMetadata: metadata(catcher.URL + "/token")}, loopback},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(catcher.Requests()) + len(tlsCatcher.Requests())
			client := tt.server.start(t, internal)
			cfg := oauth.Config{Server: "api", URL: self + "/mcp", Grant: oauth.GrantClientCredentials, ClientID: "cc", ClientSecret: "CANARY-client-secret"}
			h, err := oauth.New(cfg, &oauth.Options{Store: credstore.NewFile(t.TempDir()), HTTPClient: client})
			if err != nil {
				t.Fatal(err)
			}
			err = h.Login(t.Context(), challenge(t, client, self+"/mcp"))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant it to hold %q", err, tt.want)
			}
			if after := len(catcher.Requests()) + len(tlsCatcher.Requests()); after != before {
				t.Errorf("the local addresses received %d requests", after-before)
			}
		})
	}
}
