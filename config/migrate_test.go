package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestServedFrom: which of Cursor's servers Switchboard serves, and why the
// others of the same name are kept on.
func TestServedFrom(t *testing.T) {
	home := t.TempDir()
	d := Dirs{Home: home}
	writeFile(t, filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {
		"github":  {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${env:GITHUB_TOKEN}"}},
		"docs":    {"url": "https://docs.example.com/mcp"},
		"fs":      {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"]},
		"old":     {"command": "old-mcp"},
		"remote":  {"url": "https://a.example.com/mcp"},
		"sqlite":  {"command": "uvx", "args": ["mcp-server-sqlite"]},
		"mine":    {"command": "mine"}
	}}`)
	writeFile(t, d.UserFile(), `{
		"mcpServers": {
			"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "${secret:GITHUB_TOKEN}"}},
			"docs":   {"url": "https://docs.example.com/mcp"},
			"fs":     {"command": "npx", "args": ["-y", "server-filesystem", "/home"]},
			"old":    {"command": "old-mcp", "disabled": true},
			"remote": {"command": "a-mcp"}
		},
		"imports": ["cursor"]
	}`)
	c := Load(d)
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
	served, kept := c.ServedFrom(ImportHost(d, "cursor"))
	if diff := cmp.Diff([]string{"docs", "github"}, served); diff != "" {
		t.Errorf("served (-want +got):\n%s", diff)
	}
	why := map[string]string{}
	for _, k := range kept {
		why[k.Name] = k.Why
	}
	for name, want := range map[string]string{
		"fs":     "starts another command",
		"old":    "disabled in Switchboard",
		"remote": "another transport",
		"sqlite": "reads it from cursor's own file (imports)",
		"mine":   "reads it from cursor's own file (imports)",
	} {
		if !strings.Contains(why[name], want) {
			t.Errorf("%s: kept because %q, want %q", name, why[name], want)
		}
	}
	if len(kept) != 5 {
		t.Errorf("kept %v, want five", kept)
	}
}
