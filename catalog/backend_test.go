package catalog

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/pgtest"
)

// A backend is where a test's catalog lives: the shared test suite runs
// each test against a SQLite file and a PostgreSQL database (pgtest's
// private server; skipped without one unless SWITCHBOARD_REQUIRE_POSTGRES=1).
type backend struct {
	name string
	// openTemp opens a new, empty catalog, closed when the test ends, and
	// returns its file ("" in PostgreSQL).
	openTemp func(t testing.TB) (*Catalog, string)
	// reopen opens another handle on c's store, as another process (or
	// replica, with a connection pool of its own) would.
	reopen func(t testing.TB, c *Catalog) *Catalog
}

var (
	sqliteBackend = backend{
		name:     "sqlite",
		openTemp: openTemp,
		reopen: func(t testing.TB, c *Catalog) *Catalog {
			t.Helper()
			o, err := Open(c.Path())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { o.Close() })
			return o
		},
	}
	postgresBackend = backend{
		name: "postgres",
		openTemp: func(t testing.TB) (*Catalog, string) {
			t.Helper()
			dsn := pgtest.DSN(t)
			c := openPostgresDSN(t, dsn)
			pgDSNs.Store(c, dsn)
			return c, ""
		},
		reopen: func(t testing.TB, c *Catalog) *Catalog {
			t.Helper()
			dsn, ok := pgDSNs.Load(c)
			if !ok {
				t.Fatal("reopen: not a catalog of postgresBackend.openTemp")
			}
			o := openPostgresDSN(t, dsn.(string))
			pgDSNs.Store(o, dsn)
			return o
		},
	}
	backends = []backend{sqliteBackend, postgresBackend}

	pgDSNs sync.Map // *Catalog -> the DSN of its database
)

// openPostgresDSN opens the catalog in the database dsn names, on a
// connection pool of its own, both closed when the test ends.
func openPostgresDSN(t testing.TB, dsn string) *Catalog {
	t.Helper()
	ctx := context.Background()
	db, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c, err := OpenPostgres(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		pgDSNs.Delete(c)
	})
	return c
}

// forEachBackend runs f as a subtest per backend.
func forEachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

func openTemp(t testing.TB) (*Catalog, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "catalog.db")
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, path
}
