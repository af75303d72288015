package gateway

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestCatalogInStore: with Options.Store, the catalog lives in PostgreSQL.
// One engine indexes a server; its search and status know the tools; a
// second engine (another replica: another home, another connection pool)
// on the same database finds them without starting the server.
//
// It does not check for leaked processes (mcptest.CheckNoLeaks): the
// PostgreSQL server is a child of the test binary whose own children come
// and go (connections, autovacuum) as they will.
func TestCatalogInStore(t *testing.T) {
	dsn := pgtest.DSN(t)
	replica := func() (*Engine, string) {
		db, err := pgstore.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() }) // after the engine's Close: cleanups run last first
		home := t.TempDir()
		servers := map[string]def{"tools": fixture(testserver.Catalog)}
		return engineIn(t, home, servers, nil, &Options{Store: db, StoreKey: testStoreKey}), home
	}

	first, home := replica()
	results, err := first.Index(t.Context(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].Error != "" || results[0].Tools == 0 {
		t.Fatalf("indexing: %+v", results)
	}
	r := must(t, first, `{"search":"create issue"}`)
	if len(r.Details.Tools) == 0 || r.Details.Tools[0].Name != "issue_create" {
		t.Errorf("search: got %+v, want issue_create first\n%s", r.Details.Tools, r.Text)
	}
	if st := first.Status(t.Context()); len(st) != 1 || st[0].Tools != results[0].Tools {
		t.Errorf("status: %+v, want %d tools", st, results[0].Tools)
	}
	if _, err := os.Stat(filepath.Join(config.Dirs{Home: home}.CacheDir(), "catalog.db")); !os.IsNotExist(err) {
		t.Errorf("a catalog file was made beside the store: %v", err)
	}

	second, _ := replica()
	r = must(t, second, `{"search":"create issue"}`)
	if len(r.Details.Tools) == 0 || r.Details.Tools[0].Name != "issue_create" {
		t.Errorf("search on the second replica: got %+v, want issue_create first\n%s", r.Details.Tools, r.Text)
	}
	r = must(t, second, `{"describe":"resolve_library_id"}`)
	wantText(t, r, `tool "resolve-library-id" on "tools"`, "Context7 library ID")
	if st := second.Status(t.Context()); len(st) != 1 || st[0].Tools != results[0].Tools {
		t.Errorf("status on the second replica: %+v, want %d tools", st, results[0].Tools)
	}
	wantNoneConnected(t, second, "search, describe and status")
}

// testStoreKey is settings.store.key of the engines these tests open on a
// shared store.
var testStoreKey = []byte("a store key of thirty-two bytes!")
