package catalog

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
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
	c, err := OpenPostgres(ctx, db, testStoreKey)
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

func TestToPostgres(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT value FROM generation WHERE id = 1", "SELECT value FROM switchboard_catalog_generation WHERE id = 1"},
		{"DELETE FROM failures WHERE server = ? AND at <= ?", "DELETE FROM switchboard_catalog_failures WHERE server = $1 AND at <= $2"},
		{"UPDATE pins SET pending = '' WHERE tool = '?pins' AND server = ?", "UPDATE switchboard_catalog_pins SET pending = '' WHERE tool = '?pins' AND server = $1"},
		{"SELECT s.name FROM servers s -- tools? \nWHERE excluded.at >= failures.at AND toolsx = ?",
			"SELECT s.name FROM switchboard_catalog_servers s -- tools? \nWHERE excluded.at >= switchboard_catalog_failures.at AND toolsx = $1"},
		{`SELECT "tools" FROM resource_templates`, `SELECT "tools" FROM switchboard_catalog_resource_templates`},
	} {
		if got := toPostgres(tc.in); got != tc.want {
			t.Errorf("toPostgres(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// TestSameTables: the catalog in PostgreSQL has the tables and columns of
// the SQLite file's schema, but for the pins' MAC: a file on one machine
// signs nothing (whoever can write it can write anything the user can).
func TestSameTables(t *testing.T) {
	ctx := context.Background()
	lite, _ := openTemp(t)
	pg, _ := postgresBackend.openTemp(t)
	columns := func(c *Catalog, table string) []string {
		q := "SELECT name FROM pragma_table_info(?) ORDER BY cid"
		if c.d.postgres {
			table = pgPrefix + table
			q = "SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position"
		}
		rows, err := c.db.QueryContext(ctx, q, table)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return out
	}
	for _, table := range tables {
		l, p := columns(lite, table), columns(pg, table)
		if table == "pins" {
			p = slices.DeleteFunc(p, func(c string) bool { return c == "mac" })
		}
		if len(l) == 0 || !slices.Equal(l, p) {
			t.Errorf("table %s: SQLite has %v, PostgreSQL %v", table, l, p)
		}
	}
}
