package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestInspectorApps drives `switchboard serve` (stdio and HTTP) in front
// of the MCP Apps example server (server-basic-vanillajs) with the
// Inspector claiming the UI extension: --app-info of its tool answers as
// the server's own answer does, under the tool's direct name and the
// per-server URI; resources/read of that URI gives the server's UI byte
// for byte; the tool is called directly. On main the tool was not listed
// and the resource not found.
func TestInspectorApps(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	peers := mcptest.Peers(t)
	app := peers.BasicApp()
	home := t.TempDir()
	writeConfig(t, home, map[string]any{"mcpServers": map[string]any{
		"basic": map[string]any{"command": app.Path, "args": app.Args},
	}})
	dir := filepath.Join(t.TempDir(), "pkg")
	if err := os.MkdirAll(filepath.Join(dir, "cwd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"switchboard-test","version":"0.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := serveEnv(home)
	bin, err := exec.LookPath("switchboard")
	if err != nil {
		t.Fatal(err)
	}
	index := exec.Command(bin, "index")
	index.Env = env
	if out, err := index.CombinedOutput(); err != nil {
		t.Fatalf("switchboard index: %v\n%s", err, out)
	}
	inspect := func(t *testing.T, target []string, args ...string) string {
		t.Helper()
		cmd := peers.Inspector(append(target, append([]string{"--advertise-apps"}, args...)...)...).Cmd(t)
		cmd.Dir = filepath.Join(dir, "cwd")
		cmd.Env = append(env, peers.Inspector().Env...)
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("inspector %q: %v\n%s%s", args, err, out, stderr)
		}
		return string(out)
	}
	direct := append([]string{app.Path}, app.Args...)
	wantInfo := appInfo(t, inspect(t, direct, "--method", "tools/call", "--tool-name", "get-time", "--app-info"))
	wantInfo["toolName"] = "basic_get-time"
	wantInfo["resourceUri"] = "ui://basic/get-time/mcp-app.html"
	wantUI := inspect(t, direct, "--method", "resources/read", "--uri", "ui://get-time/mcp-app.html")
	wantUI = strings.ReplaceAll(wantUI, `"uri": "ui://get-time/mcp-app.html"`, `"uri": "ui://basic/get-time/mcp-app.html"`)

	check := func(t *testing.T, target []string) {
		got := appInfo(t, inspect(t, target, "--method", "tools/call", "--tool-name", "basic_get-time", "--app-info"))
		if diff := cmp.Diff(wantInfo, got); diff != "" {
			t.Errorf("--app-info through serve (-directly, renamed +through serve):\n%s", diff)
		}
		if got := inspect(t, target, "--method", "resources/read", "--uri", "ui://basic/get-time/mcp-app.html"); got != wantUI {
			t.Errorf("resources/read through serve differs from directly (%d bytes, want %d)", len(got), len(wantUI))
		}
		out := inspect(t, target, "--method", "tools/call", "--tool-name", "basic_get-time")
		if !strings.Contains(out, `"time"`) || strings.Contains(out, `"isError": true`) {
			t.Errorf("calling basic_get-time through serve: %s", out)
		}
		checkStrict(t, func(t *testing.T, args ...string) string { return inspect(t, target, args...) })
	}
	t.Run("stdio", func(t *testing.T) { check(t, []string{"switchboard", "serve"}) })
	t.Run("http", func(t *testing.T) { check(t, []string{startServe(t, env, "--http", "127.0.0.1:0")}) })
}

// appInfo decodes the Inspector's --app-info line.
func appInfo(t *testing.T, out string) map[string]any {
	t.Helper()
	var info map[string]any
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("--app-info: %v\n%s", err, out)
	}
	return info
}
