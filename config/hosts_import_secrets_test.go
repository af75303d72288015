package config

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A host file with the literal credentials of the usual setups: a token in
// a stdio server's env, a Bearer token and an API-key header, a URL's
// password and ?api_key=, next to values that are no credential or are
// references already.
const literalHostFile = `{"mcpServers": {
	"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
		"env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_CanaryCanaryCanary0123456789abcdef", "LOG_LEVEL": "debug", "OTHER_TOKEN": "${OTHER_TOKEN}"}},
	"figma-remote": {"url": "https://u:pw-canary@figma.example/mcp?api_key=k-canary&x=1",
		"headers": {"Authorization": "Bearer fig-canary", "X-Api-Key": "xk-canary", "Accept": "text/plain"}},
	"plain": {"command": "srv"},
	"input": {"command": "x", "env": {"API_TOKEN": "${input:tok}"}}
}}`

func TestImportMoveSecrets(t *testing.T) {
	d := newDirs(t)
	file := filepath.Join(d.Home, ".config", "Claude", "claude_desktop_config.json")
	writeFile(t, file, literalHostFile)

	imp := ImportHostWith(d, "claude-desktop", ImportOptions{MoveSecrets: true})
	var names []string
	for _, s := range imp.Servers {
		names = append(names, s.Name)
	}
	if want := []string{"figma-remote", "github", "plain", "input"}; !cmp.Equal(names, want[:3]) {
		t.Errorf("servers %v, want %v (input, whose reference only the host knows, skipped)", names, want[:3])
	}
	for _, p := range imp.Problems {
		if strings.Contains(p.Message, "looks like a credential") {
			t.Errorf("a credential was not moved: %v", p)
		}
	}
	type moved struct{ Server, Path, Name, Value string }
	var got []moved
	for _, m := range imp.Moved {
		got = append(got, moved{m.Server, m.Path, m.Name, m.Value.Reveal()})
	}
	want := []moved{
		{"figma-remote", "mcpServers.figma-remote.headers.Authorization", "FIGMA_REMOTE_AUTHORIZATION", "fig-canary"},
		{"figma-remote", "mcpServers.figma-remote.headers.X-Api-Key", "FIGMA_REMOTE_X_API_KEY", "xk-canary"},
		{"figma-remote", "mcpServers.figma-remote.url", "FIGMA_REMOTE_URL_PASSWORD", "pw-canary"},
		{"figma-remote", "mcpServers.figma-remote.url", "FIGMA_REMOTE_API_KEY", "k-canary"},
		{"github", "mcpServers.github.env.GITHUB_PERSONAL_ACCESS_TOKEN", "GITHUB_GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_CanaryCanaryCanary0123456789abcdef"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("moved (-want +got):\n%s", diff)
	}
	gh := imp.Servers[1].Definition()
	if diff := cmp.Diff(map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${secret:GITHUB_GITHUB_PERSONAL_ACCESS_TOKEN}", "LOG_LEVEL": "debug", "OTHER_TOKEN": "${OTHER_TOKEN}"}, gh.Env); diff != "" {
		t.Errorf("github env (-want +got):\n%s", diff)
	}
	fig := imp.Servers[0].Definition()
	if fig.URL != "https://u:${secret:FIGMA_REMOTE_URL_PASSWORD}@figma.example/mcp?api_key=${secret:FIGMA_REMOTE_API_KEY}&x=1" {
		t.Errorf("figma url = %s", fig.URL)
	}
	if diff := cmp.Diff(map[string]string{"Authorization": "Bearer ${secret:FIGMA_REMOTE_AUTHORIZATION}", "X-Api-Key": "${secret:FIGMA_REMOTE_X_API_KEY}", "Accept": "text/plain"}, fig.Headers); diff != "" {
		t.Errorf("figma headers (-want +got):\n%s", diff)
	}
	// Nothing prints a value.
	for _, v := range []any{imp.Moved, imp.Problems, fmt.Sprint(imp.Moved[0])} {
		if s := fmt.Sprintf("%v %+v", v, v); strings.Contains(s, "canary") || strings.Contains(s, "Canary") {
			t.Errorf("prints a value: %s", s)
		}
	}

	// Resolved from a store that holds them, the definitions give the
	// host's values back.
	store := storeOf(t, map[string]string{})
	for _, m := range imp.Moved {
		store.Set("secret/"+m.Name, []byte(m.Value.Reveal()))
	}
	r, err := imp.Servers[0].Resolve(Lookup{Secrets: store})
	if err != nil {
		t.Fatal(err)
	}
	if r.URL.Reveal() != "https://u:pw-canary@figma.example/mcp?api_key=k-canary&x=1" || r.Headers["Authorization"].Reveal() != "Bearer fig-canary" {
		t.Errorf("resolved %s, %s", r.URL.Reveal(), r.Headers["Authorization"].Reveal())
	}
}

// TestImportWithoutMoving: without the option, a server with a literal
// credential is skipped, and the warning names --move-secrets.
func TestImportWithoutMoving(t *testing.T) {
	d := newDirs(t)
	writeFile(t, filepath.Join(d.Home, ".config", "Claude", "claude_desktop_config.json"), literalHostFile)
	imp := ImportHost(d, "claude-desktop")
	if len(imp.Servers) != 1 || imp.Servers[0].Name != "plain" || len(imp.Moved) != 0 {
		t.Fatalf("servers %v, moved %d; want only plain", imp.Servers, len(imp.Moved))
	}
	found := false
	for _, p := range imp.Problems {
		if p.Server == "github" && strings.Contains(p.Message, "hint: switchboard import --from claude-desktop --write --move-secrets moves it into the credential store (server skipped)") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning for github naming --move-secrets: %v", imp.Problems)
	}
}

func TestSecretNameFor(t *testing.T) {
	for _, tt := range []struct{ server, what, want string }{
		{"github", "GITHUB_TOKEN", "GITHUB_GITHUB_TOKEN"},
		{"my-server", "X-Api-Key", "MY_SERVER_X_API_KEY"},
		{"9lives", "token", "_9LIVES_TOKEN"},
		{"s", "api.key", "S_API_KEY"},
		{strings.Repeat("a", 64), strings.Repeat("B", 100), strings.ToUpper(strings.Repeat("a", 64)) + "_" + strings.Repeat("B", 63)},
	} {
		got := secretNameFor(tt.server, tt.what)
		if got != tt.want || !ValidSecretName(got) {
			t.Errorf("secretNameFor(%q, %q) = %q, want %q", tt.server, tt.what, got, tt.want)
		}
	}
}

func TestRenameSecret(t *testing.T) {
	env := map[string]string{"T": "${secret:A}", "U": "x${secret:A}y${secret:AB}"}
	def := Definition{Env: env, URL: "https://h/?k=${secret:A}"}
	def.RenameSecret("A", "A_2")
	if def.Env["T"] != "${secret:A_2}" || def.Env["U"] != "x${secret:A_2}y${secret:AB}" || def.URL != "https://h/?k=${secret:A_2}" {
		t.Errorf("renamed: %v %s", def.Env, def.URL)
	}
	if env["T"] != "${secret:A}" {
		t.Error("RenameSecret changed the map it was given")
	}
}
