package oauth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// FuzzHostileServer logs in against an authorization server whose metadata,
// registration and token answers are the fuzzer's. Whatever they are, the
// login does not panic; a failed login's error names the server and holds
// no line break; and no token is stored unless the login succeeded.
func FuzzHostileServer(f *testing.F) {
	f.Add(`{"issuer":"ISSUER","authorization_endpoint":"ISSUER/authorize","token_endpoint":"ISSUER/token","registration_endpoint":"ISSUER/register","code_challenge_methods_supported":["S256"],"response_types_supported":["code"]}`,
		`{"client_id":"c"}`, `{"access_token":"t","token_type":"Bearer","expires_in":60}`)
	f.Add(`{"issuer":"ISSUER","authorization_endpoint":"javascript:alert(1)","token_endpoint":"ISSUER/token","code_challenge_methods_supported":["S256"]}`, `{}`, `{}`)
	f.Add(`{"issuer":"https://evil.example"}`, `{"client_id":"c\r\nx: y"}`, `{"access_token":"a b","token_type":"Bearer"}`)
	f.Add(`not json`, `{"client_id":"c","token_endpoint_auth_method":"none","client_secret":"s"}`, `{"access_token":"t","token_type":"mac"}`)
	f.Add(`{"issuer":"ISSUER","authorization_endpoint":"ISSUER/authorize","token_endpoint":"ISSUER/token","registration_endpoint":"ISSUER/register","code_challenge_methods_supported":["S256"]}`,
		`{"client_id":"c"}`, `{"error":"invalid_grant","error_description":"line\nbreak"}`)
	f.Fuzz(func(t *testing.T, meta, reg, tok string) {
		var base string
		mux := http.NewServeMux()
		mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, base+"/mcp", base)
		})
		answer := func(body string) http.HandlerFunc {
			return func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, strings.ReplaceAll(body, "ISSUER", base))
			}
		}
		mux.HandleFunc("/.well-known/oauth-authorization-server", answer(meta))
		mux.HandleFunc("/register", answer(reg))
		mux.HandleFunc("/token", answer(tok))
		mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			http.Redirect(w, r, q.Get("redirect_uri")+"?code=c&state="+url.QueryEscape(q.Get("state")), http.StatusFound)
		})
		mux.HandleFunc("/mcp", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
		})
		ts := httptest.NewServer(mux)
		defer ts.Close()
		base = ts.URL
		store := credstore.NewFile(t.TempDir())
		cfg := oauth.Config{Server: "api", URL: base + "/mcp"}
		// A redirect that never comes (an authorization endpoint elsewhere)
		// ends the login at LoginTimeout: short here, and either outcome
		// is checked below.
		h, err := oauth.New(cfg, &oauth.Options{Store: store, LoginTimeout: 5 * time.Second, Prompt: func(ctx context.Context, _, authURL string) (string, error) {
			if u, err := url.Parse(authURL); err != nil || u.Host != strings.TrimPrefix(base, "http://") {
				return "", fmt.Errorf("not opening %q", authURL) // a browser is not sent elsewhere here
			}
			_, err := http.Get(authURL)
			return "", err
		}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		err = h.Login(t.Context(), resp)
		stored, _ := oauth.Lookup(store, cfg)
		switch {
		case err == nil && stored == nil:
			t.Fatal("logged in, and nothing stored")
		case err != nil && stored != nil:
			t.Fatalf("failed (%v), and a token was stored", err)
		case err != nil && (!strings.Contains(err.Error(), `"api"`) || strings.ContainsAny(err.Error(), "\r\n")):
			t.Fatalf("error %q: want one line naming the server", err)
		}
	})
}
