package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/credstore"
)

func TestDecodeOAuth(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		def  string
		want *OAuth
	}{
		{"off", KindUser, `{"url": "https://h/mcp", "oauth": false}`, &OAuth{Disabled: true}},
		{"defaults", KindUser, `{"url": "https://h/mcp", "oauth": true}`, &OAuth{}},
		{"absent", KindUser, `{"url": "https://h/mcp"}`, nil},
		{"everything", KindUser, `{"url": "https://h/mcp", "oauth": {"clientId": "abc", "clientSecret": "${LINEAR_SECRET}",
			"scopes": ["read", "write"], "redirectPort": 33418, "clientMetadataUrl": "https://example.com/sb.json", "grant": "authorization_code"}}`,
			&OAuth{ClientID: "abc", ClientSecret: "${LINEAR_SECRET}", Scopes: []string{"read", "write"}, RedirectPort: 33418,
				ClientMetadataURL: "https://example.com/sb.json", Grant: GrantAuthorizationCode}},
		{"machine to machine", KindUser, `{"url": "https://h/mcp", "oauth": {"grant": "client_credentials", "clientId": "svc", "clientSecret": "${SVC_SECRET}"}}`,
			&OAuth{Grant: GrantClientCredentials, ClientID: "svc", ClientSecret: "${SVC_SECRET}"}},
		{"machine to machine with a key", KindUser, `{"url": "https://h/mcp", "oauth": {"grant": "client_credentials", "clientId": "svc", "clientKey": "${secret:SVC_KEY}"}}`,
			&OAuth{Grant: GrantClientCredentials, ClientID: "svc", ClientKey: "${secret:SVC_KEY}"}},
		{"token exchange", KindUser, `{"url": "https://h/mcp", "oauth": {"grant": "token_exchange", "clientId": "gw", "clientKey": "${secret:GW_KEY}", "audience": "urn:api", "scopes": ["read"]}}`,
			&OAuth{Grant: GrantTokenExchange, ClientID: "gw", ClientKey: "${secret:GW_KEY}", Audience: "urn:api", Scopes: []string{"read"}}},
		{"Claude Code's spelling in .mcp.json", KindProjectShared, `{"type": "http", "url": "https://h/mcp", "oauth": {"clientId": "abc", "callbackPort": 8080, "scopes": "read write"}}`,
			&OAuth{ClientID: "abc", RedirectPort: 8080, Scopes: []string{"read", "write"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, problems, fatal := decode(tt.kind, srv(tt.def))
			if fatal || len(problems) > 0 {
				t.Fatalf("problems %v", problems)
			}
			if diff := cmp.Diff(tt.want, doc.servers[0].OAuth); diff != "" {
				t.Errorf("oauth (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeOAuthProblems(t *testing.T) {
	tests := []struct {
		name, def, path, msg string
		kind                 Kind
		invalid              bool // the entry is invalid as decoded; a literal is made invalid by Load
	}{
		{"a string", `{"url": "https://h/mcp", "oauth": "yes"}`, "mcpServers.s.oauth", "must be false or an object", KindUser, true},
		{"unknown field", `{"url": "https://h/mcp", "oauth": {"client_id": "x"}}`, "mcpServers.s.oauth", `unknown field "client_id" (known fields: clientId, clientSecret, clientKey, scopes, redirectPort, clientMetadataUrl, grant, audience)`, KindUser, true},
		{"unknown field in a shared file", `{"url": "https://h/mcp", "oauth": {"authServerMetadataUrl": "https://a"}}`, "mcpServers.s.oauth", `unknown field "authServerMetadataUrl" ignored`, KindShared, false},
		{"callbackPort in our file", `{"url": "https://h/mcp", "oauth": {"callbackPort": 8080}}`, "mcpServers.s.oauth", `unknown field "callbackPort"`, KindUser, true},
		{"literal secret", `{"url": "https://h/mcp", "oauth": {"clientId": "x", "clientSecret": "canary-secret"}}`, "mcpServers.s.oauth.clientSecret", "must be a reference such as ${S_CLIENT_SECRET}, not a literal (the value is not shown)", KindUser, false},
		{"secret without client", `{"url": "https://h/mcp", "oauth": {"clientSecret": "${X}"}}`, "mcpServers.s.oauth", `has "clientSecret" without "clientId"`, KindUser, true},
		{"client_credentials without a secret", `{"url": "https://h/mcp", "oauth": {"grant": "client_credentials", "clientId": "x"}}`, "mcpServers.s.oauth", `the client_credentials grant needs "clientId" and "clientSecret" or "clientKey"`, KindUser, true},
		{"token_exchange without a client", `{"url": "https://h/mcp", "oauth": {"grant": "token_exchange"}}`, "mcpServers.s.oauth", `the token_exchange grant needs "clientId" and "clientSecret" or "clientKey"`, KindUser, true},
		{"token_exchange shared", `{"url": "https://h/mcp", "perUser": false, "oauth": {"grant": "token_exchange", "clientId": "gw", "clientSecret": "${S}"}}`, "mcpServers.s.oauth", `the token_exchange grant exchanges each signed-in user's own token, and "perUser": false makes one shared login`, KindUser, true},
		{"audience without token_exchange", `{"url": "https://h/mcp", "oauth": {"grant": "client_credentials", "clientId": "x", "clientSecret": "${S}", "audience": "api"}}`, "mcpServers.s.oauth", `has "audience", which is a parameter of the token_exchange grant only`, KindUser, true},
		{"literal key", `{"url": "https://h/mcp", "oauth": {"grant": "client_credentials", "clientId": "x", "clientKey": "-----BEGIN PRIVATE KEY-----canary"}}`, "mcpServers.s.oauth.clientKey", "must be a reference such as ${S_CLIENT_KEY}, not a literal (the value is not shown)", KindUser, false},
		{"key without client", `{"url": "https://h/mcp", "oauth": {"grant": "client_credentials", "clientKey": "${K}"}}`, "mcpServers.s.oauth", `has "clientKey" without "clientId"`, KindUser, true},
		{"key and secret", `{"url": "https://h/mcp", "oauth": {"grant": "client_credentials", "clientId": "x", "clientSecret": "${S}", "clientKey": "${K}"}}`, "mcpServers.s.oauth", `has both "clientSecret" and "clientKey"`, KindUser, true},
		{"key with a login", `{"url": "https://h/mcp", "oauth": {"clientId": "x", "clientKey": "${K}"}}`, "mcpServers.s.oauth", `has "clientKey", which authenticates the client_credentials and token_exchange grants only; hint: add "grant": "client_credentials"`, KindUser, true},
		{"unknown grant", `{"url": "https://h/mcp", "oauth": {"grant": "password"}}`, "mcpServers.s.oauth.grant", `must be "authorization_code", "client_credentials" or "token_exchange", not "password"`, KindUser, true},
		{"port 0", `{"url": "https://h/mcp", "oauth": {"redirectPort": 0}}`, "mcpServers.s.oauth.redirectPort", "from 1 to 65535", KindUser, true},
		{"metadata URL over http", `{"url": "https://h/mcp", "oauth": {"clientMetadataUrl": "http://example.com/c.json"}}`, "mcpServers.s.oauth.clientMetadataUrl", "must be an https URL with a path", KindUser, true},
		{"metadata URL at the root", `{"url": "https://h/mcp", "oauth": {"clientMetadataUrl": "https://example.com/"}}`, "mcpServers.s.oauth.clientMetadataUrl", "must be an https URL with a path", KindUser, true},
		{"scope with a space", `{"url": "https://h/mcp", "oauth": {"scopes": ["read write"]}}`, "mcpServers.s.oauth.scopes", "each scope must be a non-empty word", KindUser, true},
		{"scopes as a string in our file", `{"url": "https://h/mcp", "oauth": {"scopes": "read"}}`, "mcpServers.s.oauth.scopes", "must be an array of strings", KindUser, true},
		{"empty clientId", `{"url": "https://h/mcp", "oauth": {"clientId": ""}}`, "mcpServers.s.oauth.clientId", "must not be empty", KindUser, true},
		{"stdio", `{"command": "x", "oauth": {"clientId": "a"}}`, "mcpServers.s.oauth", `"oauth" belongs to HTTP servers`, KindUser, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, problems, fatal := decode(tt.kind, srv(tt.def))
			if len(problems) != 1 {
				t.Fatalf("got %d problems %v, want 1", len(problems), problems)
			}
			p := problems[0]
			if p.Path != tt.path || !strings.Contains(p.Message, tt.msg) {
				t.Errorf("got %q at %q, want %q at %q", p.Message, p.Path, tt.msg, tt.path)
			}
			// An error in a server's entry is that server's (issue 30).
			if fatal {
				t.Errorf("fatal: got true, want the error scoped to the server")
			}
			if invalid := doc.servers[0].Err != nil; invalid != tt.invalid {
				t.Errorf("invalid: got %v (%v), want %v", invalid, doc.servers[0].Err, tt.invalid)
			}
			if strings.Contains(p.Error(), "canary") {
				t.Errorf("the problem shows the literal: %s", p.Error())
			}
		})
	}
}

// TestOAuthResolveAndWrite: the client secret resolves like any reference,
// and a definition written back keeps the oauth field as written.
func TestOAuthResolveAndWrite(t *testing.T) {
	doc, problems, _ := decode(KindUser, srv(`{"url": "https://h/mcp", "oauth": {"clientId": "abc", "clientSecret": "${SB_SECRET}", "scopes": ["a"]}}`))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	s := doc.servers[0]
	res, err := s.Resolve(Lookup{Env: func(k string) (string, bool) { return "s3cret", k == "SB_SECRET" }})
	if err != nil || res.OAuthClientSecret.Reveal() != "s3cret" {
		t.Fatalf("Resolve = %v, %v", res, err)
	}
	if _, err := s.Resolve(Lookup{Env: func(string) (string, bool) { return "", false }}); err == nil || !strings.Contains(err.Error(), "mcpServers.s.oauth.clientSecret: environment variable SB_SECRET is not set") {
		t.Errorf("unset secret: %v", err)
	}
	// A secret in the credential store, like any other reference.
	stored, _, _ := decode(KindUser, srv(`{"url": "https://h/mcp", "oauth": {"clientId": "abc", "clientSecret": "${secret:SB_SECRET}"}}`))
	store := credstore.NewFile(t.TempDir())
	if err := store.Set(credstore.SecretKey("SB_SECRET"), []byte("from-store")); err != nil {
		t.Fatal(err)
	}
	if res, err := stored.servers[0].Resolve(Lookup{Secrets: store}); err != nil || res.OAuthClientSecret.Reveal() != "from-store" {
		t.Errorf("${secret:SB_SECRET}: %v, %v", res, err)
	}
	b, _ := json.Marshal(s.Definition())
	if !strings.Contains(string(b), `"oauth":{"clientId":"abc","clientSecret":"${SB_SECRET}","scopes":["a"]}`) {
		t.Errorf("definition %s", b)
	}
	off, _, _ := decode(KindUser, srv(`{"url": "https://h/mcp", "oauth": false}`))
	if b, _ := json.Marshal(off.servers[0].Definition()); !strings.Contains(string(b), `"oauth":false`) {
		t.Errorf("definition %s", b)
	}
	for _, tt := range []struct {
		def  string
		want bool
	}{
		{`{"url": "https://h/mcp"}`, true},
		{`{"url": "https://h/mcp", "oauth": false}`, false},
		{`{"url": "https://h/mcp", "headers": {"authorization": "Bearer ${T}"}}`, false},
		{`{"command": "x"}`, false},
	} {
		doc, _, _ := decode(KindUser, srv(tt.def))
		if got := doc.servers[0].OAuthEnabled(); got != tt.want {
			t.Errorf("%s: OAuthEnabled = %v, want %v", tt.def, got, tt.want)
		}
	}
}

// TestTokenExchangeNeedsIdentity: a server whose grant is token_exchange
// is refused, with an error that says what to set, unless
// settings.identity is set (users sign in, and their tokens are what is
// exchanged).
func TestTokenExchangeNeedsIdentity(t *testing.T) {
	const server = `"mcpServers": {"api": {"url": "https://api.example.com/mcp", "oauth": {"grant": "token_exchange", "clientId": "gw", "clientSecret": "${GW_SECRET}"}}}`
	for _, c := range []struct {
		name, settings, want string
	}{
		{"without identity", `{}`, `the token_exchange grant exchanges the signed-in user's own access token, and no user signs in: settings.identity is not set`},
		{"with identity", `{"identity": {"issuer": "https://login.example.com", "audience": "https://sb.example.com/mcp"}}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Dirs{Home: t.TempDir()}
			os.MkdirAll(filepath.Dir(d.UserFile()), 0o755)
			if err := os.WriteFile(d.UserFile(), []byte(`{"settings": `+c.settings+`, `+server+`}`), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := Load(d)
			s, ok := cfg.Server("api")
			if !ok {
				t.Fatal("no server api")
			}
			if c.want == "" {
				if s.Err != nil || len(cfg.Errors()) > 0 {
					t.Fatalf("got %v %v, want no error", s.Err, cfg.Errors())
				}
				return
			}
			if s.Err == nil || !strings.Contains(s.Err.Error(), c.want) || !strings.Contains(s.Err.Error(), "hint: set settings.identity") {
				t.Errorf("got %v, want %q and a hint", s.Err, c.want)
			}
			if cfg.Err() != nil {
				t.Errorf("the whole configuration failed: %v; want the server's error alone", cfg.Err())
			}
		})
	}
}
