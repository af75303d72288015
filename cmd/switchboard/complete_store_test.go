package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// TestCompleteToolNamesFromStore: with settings.store, the tool names of
// call and describe come from the catalog in PostgreSQL; with the store's
// variable unset, or before any replica made the catalog, none are
// offered, none are made, and nothing is written.
func TestCompleteToolNamesFromStore(t *testing.T) {
	t.Cleanup(pgtest.Stop) // after the database's own cleanup: this binary's TestMain is testscript's
	dsn := pgtest.DSN(t)
	home := t.TempDir()
	vars := map[string]string{"HOME": home, "DATABASE_URL": dsn, "SWITCHBOARD_STORE_KEY": base64.StdEncoding.EncodeToString(make([]byte, 32))}
	var out bytes.Buffer
	e := &env{
		stdin: bytes.NewReader(nil), stdout: &out, stderr: &out,
		getenv:    func(k string) string { return vars[k] },
		lookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		cwd:       home, goos: runtime.GOOS,
	}
	d := e.dirs("")
	if err := os.MkdirAll(filepath.Dir(d.UserFile()), 0o700); err != nil {
		t.Fatal(err)
	}
	conf := `{"mcpServers": {"good": {"command": "true"}},
		"settings": {"store": {"postgres": "${DATABASE_URL}", "key": "${SWITCHBOARD_STORE_KEY}"}}}`
	if err := os.WriteFile(d.UserFile(), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Load(d)
	if err := cfg.Err(); err != nil || cfg.Settings.Store == nil {
		t.Fatalf("config: %v, store %v", err, cfg.Settings.Store)
	}

	if got := complete(t.Context(), e, []string{"call", ""}); len(got) != 0 {
		t.Errorf("before any catalog: %q, want nothing", got)
	}
	ctx := context.Background()
	db, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := pgstore.Versions(ctx, db); err != nil || v["catalog"] != 0 {
		t.Fatalf("completion made the catalog's tables: %v, %v", v, err)
	}
	cat, err := catalog.OpenPostgres(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if err := cat.Put(ctx, &catalog.Entry{Server: "good", Hash: cfg.Servers[0].Hash(), Tools: []*mcp.Tool{{Name: "echo"}, {Name: "add"}}}); err != nil {
		t.Fatal(err)
	}

	if got, want := complete(t.Context(), e, []string{"call", ""}), []string{"good_add", "good_echo"}; !slices.Equal(got, want) {
		t.Errorf("call: got %q, want %q", got, want)
	}
	if got, want := complete(t.Context(), e, []string{"describe", "--server", "good", "e"}), []string{"echo"}; !slices.Equal(got, want) {
		t.Errorf("describe --server good: got %q, want %q", got, want)
	}
	delete(vars, "DATABASE_URL")
	if got := complete(t.Context(), e, []string{"call", ""}); len(got) != 0 {
		t.Errorf("with DATABASE_URL unset: %q, want nothing", got)
	}
	if out.Len() > 0 {
		t.Errorf("completion printed:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(d.CacheDir(), "catalog.db")); !os.IsNotExist(err) {
		t.Errorf("completion made a catalog file: %v", err)
	}
}
