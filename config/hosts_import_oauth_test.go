package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestImportHostOAuth: each host's OAuth settings map to our oauth field;
// what we do not model is a warning; a literal client secret is refused
// like any literal credential, without showing it.
func TestImportHostOAuth(t *testing.T) {
	tests := []struct {
		name, host, file, content string
		want                      *OAuth
		problem                   string // in a problem, if any
	}{
		{"claude code", "claude-code", claudeCodeFile,
			`{"mcpServers": {"s": {"type": "http", "url": "https://h/mcp", "oauth": {"clientId": "cc", "callbackPort": 8080, "scopes": "read write", "authServerMetadataUrl": "https://a/.well-known/x"}}}}`,
			&OAuth{ClientID: "cc", RedirectPort: 8080, Scopes: []string{"read", "write"}},
			"authServerMetadataUrl is not supported: Switchboard discovers the authorization server's endpoints"},
		{"cursor", "cursor", cursorFile,
			`{"mcpServers": {"s": {"url": "https://h/mcp", "auth": {"CLIENT_ID": "cu", "CLIENT_SECRET": "${env:CURSOR_SECRET}", "scopes": ["a"]}}}}`,
			&OAuth{ClientID: "cu", ClientSecret: "${CURSOR_SECRET}", Scopes: []string{"a"}}, ""},
		{"cursor literal secret", "cursor", cursorFile,
			`{"mcpServers": {"s": {"url": "https://h/mcp", "auth": {"CLIENT_ID": "cu", "CLIENT_SECRET": "canary-literal"}}}}`,
			nil, "mcpServers.s.auth.CLIENT_SECRET: must be a reference such as ${S_CLIENT_SECRET}, not a literal (the value is not shown)"},
		{"vs code", "vscode", vscodeLinux,
			`{"servers": {"s": {"type": "http", "url": "https://h/mcp", "oauth": {"clientId": "vs", "enterpriseManaged": true}}}}`,
			&OAuth{ClientID: "vs"}, "enterpriseManaged is not supported"},
		{"gemini off", "gemini", geminiFile,
			`{"mcpServers": {"s": {"httpUrl": "https://h/mcp", "oauth": {"enabled": false, "clientId": "g"}}}}`,
			&OAuth{Disabled: true}, ""},
		{"gemini", "gemini", geminiFile,
			`{"mcpServers": {"s": {"httpUrl": "https://h/mcp", "oauth": {"clientId": "g", "clientSecret": "$G_SECRET", "scopes": ["x"], "tokenUrl": "https://a/token"}}}}`,
			&OAuth{ClientID: "g", ClientSecret: "${G_SECRET}", Scopes: []string{"x"}}, "tokenUrl is not supported"},
		{"opencode", "opencode", opencodeJSON,
			`{"mcp": {"s": {"type": "remote", "url": "https://h/mcp", "oauth": {"clientId": "o", "clientSecret": "{env:O_SECRET}", "scope": "r w"}}}}`,
			&OAuth{ClientID: "o", ClientSecret: "${O_SECRET}", Scopes: []string{"r", "w"}}, ""},
		{"codex scopes", "codex", codexFile,
			"[mcp_servers.s]\nurl = \"https://h/mcp\"\nscopes = [\"repo\"]\noauth_resource = \"https://h\"\n",
			&OAuth{Scopes: []string{"repo"}}, "oauth_resource is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := hostHome(t, map[string]string{tt.file: tt.content})
			imp := ImportHost(Dirs{Home: home, GOOS: "linux"}, tt.host)
			var got *OAuth
			for _, s := range imp.Servers {
				if s.Name == "s" {
					got = s.OAuth
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("oauth (-want +got):\n%s\nproblems: %v", diff, imp.Problems)
			}
			found := tt.problem == ""
			for _, p := range imp.Problems {
				if tt.problem != "" && strings.Contains(p.Error(), tt.problem) {
					found = true
				}
				if strings.Contains(p.Error(), "canary") {
					t.Errorf("a problem shows the literal: %s", p.Error())
				}
			}
			if !found {
				t.Errorf("problems %v, want one saying %q", imp.Problems, tt.problem)
			}
		})
	}
}
