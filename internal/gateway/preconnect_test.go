package gateway

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// ownedFixture is fixture with the leak checker's mark in its environment.
func ownedFixture(mode string) def {
	path, args, env := testserver.Command(mode)
	env[mcptest.OwnerEnv] = os.Getenv(mcptest.OwnerEnv)
	return def{"command": path, "args": args, "env": env}
}

// TestPreconnect makes an engine that starts a lazy server as it opens:
// the server connects with no request, and what it lists reaches the
// catalog, though it may connect before the catalog is open.
func TestPreconnect(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	e := engineIn(t, t.TempDir(), map[string]def{"f": ownedFixture(testserver.Good), "g": ownedFixture(testserver.Good)}, nil,
		&Options{Preconnect: []string{"f", "nobody"}})
	s, _ := e.cfg.Server("f")
	// The tools reach the catalog as the engine handles f's connection;
	// one handled before the hook is set is seen by the first check.
	changed := handledChanges(e)
	timeout := time.After(20 * time.Second)
	for {
		if _, ok := e.cached(t.Context(), s); ok {
			break
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("20s after New, f's tools are not in the catalog; servers: %+v", e.pool.Snapshot())
		}
	}
	for _, st := range e.pool.Snapshot() {
		want := map[string]upstream.State{"f": upstream.StateConnected, "g": upstream.StateDisconnected}[st.Name]
		if st.State != want || st.Generation > 1 {
			t.Errorf("%s is %s at generation %d, want %s, at most one connection", st.Name, st.State, st.Generation, want)
		}
	}
}

// TestPreconnectNewFails checks that an engine that cannot open its catalog
// leaves no server it started running.
func TestPreconnectNewFails(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := t.TempDir()
	cfg := userConfig(t, home, map[string]def{"f": ownedFixture(testserver.Good)}, nil)
	notDir := filepath.Join(home, "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := New(context.Background(), cfg, &Options{
		Preconnect: []string{"f"}, CatalogPath: filepath.Join(notDir, "catalog.db"), SpillDir: filepath.Join(home, "spill"),
	})
	if err == nil {
		e.Close()
		t.Fatal("New with a catalog under a regular file: no error")
	}
	// CheckNoLeaks fails the test if the server New started is left.
}
