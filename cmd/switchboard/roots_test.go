package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// TestPanelOffersConfiguredRoots opens the panel's engine, as switchboard
// panel does, from the root of the file system and from the home
// directory, and checks that the real filesystem server keeps to the
// directory its configuration gives it: the panel offers no root of its
// own (its working directory was one), and a file outside stays out of
// reach.
func TestPanelOffersConfiguredRoots(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	p := mcptest.Peers(t)
	home := t.TempDir()
	d := filepath.Join(home, "projects")
	os.MkdirAll(d, 0o755)
	os.WriteFile(filepath.Join(d, "note.txt"), []byte("in projects"), 0o644)
	secret := filepath.Join(home, ".claude.json")
	os.WriteFile(secret, []byte(`{"oauthAccount": "PRIVATE"}`), 0o600)
	fs := p.Filesystem(d)
	writeConfig(t, home, map[string]any{"mcpServers": map[string]any{"fs": map[string]any{"command": fs.Path, "args": fs.Args, "env": commandEnv(fs)}}})
	for _, cwd := range []string{"/", home} {
		t.Run(cwd, func(t *testing.T) {
			var out bytes.Buffer
			e := &env{
				stdin: strings.NewReader(""), stdout: &out, stderr: &out, cwd: cwd, goos: runtime.GOOS,
				getenv: func(k string) string {
					if k == "HOME" {
						return home
					}
					return ""
				},
				lookupEnv: func(string) (string, bool) { return "", false },
			}
			l, err := e.panelLocal(t.Context(), "")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Engine.Close()
			call := func(tool string, args map[string]any) *proxy.Result {
				return l.Engine.Do(t.Context(), &proxy.Request{Action: proxy.ActionCall, Server: "fs", Name: tool, Args: args})
			}
			if r := call("list_allowed_directories", map[string]any{}); !strings.HasPrefix(r.Text, "Allowed directories:\n"+d+"\n") && r.Text != "Allowed directories:\n"+d {
				t.Errorf("the filesystem server allows %q, want %s alone", r.Text, d)
			}
			if r := call("read_text_file", map[string]any{"path": secret}); !r.IsError || strings.Contains(r.Text, "PRIVATE") {
				t.Errorf("reading %s: %q, want access denied", secret, r.Text)
			}
		})
	}
}
