package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// everythingHome writes a configuration with the everything server as
// "everything" into a new home, and returns the home.
func everythingHome(t *testing.T) string {
	t.Helper()
	ev := mcptest.Peers(t).Everything()
	env := map[string]string{}
	for _, kv := range ev.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return homeWith(t, map[string]any{"everything": map[string]any{"command": ev.Path, "args": ev.Args, "env": env}})
}

func homeWith(t *testing.T, servers map[string]any) string {
	t.Helper()
	home := t.TempDir()
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	dir := filepath.Join(home, ".config", "switchboard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}
