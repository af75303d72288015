package main

import (
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
	writeConfig(t, home, map[string]any{"mcpServers": servers})
	return home
}
