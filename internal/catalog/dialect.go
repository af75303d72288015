package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
)

// A dialect is what differs between the databases a catalog lives in:
// SQLite for one machine, PostgreSQL for replicas sharing one database.
// Queries are written once, in SQLite's form with ? placeholders and the
// plain table names; a dialect rewrites each query string once (see q).
type dialect struct {
	postgres bool

	// readTx begins the read transactions that must see one snapshot.
	readTx *sql.TxOptions

	// lockWrites is run first in every write transaction; "" for none.
	// SQLite needs none: its immediate transactions take the file's write
	// lock as they begin. PostgreSQL locks the generation row, so that
	// writers on every replica take turns as SQLite's do: a read-modify-
	// write (UpdatePins, Accept, Prune) sees the writes before it, and
	// embeddings' ids are allocated in commit order (see vectors.load).
	lockWrites string

	queries sync.Map // query as written -> query for this dialect
}

var (
	sqliteDialect   = &dialect{readTx: &sql.TxOptions{ReadOnly: true}}
	postgresDialect = &dialect{
		postgres: true,
		// PostgreSQL's default, read committed, takes a snapshot per
		// statement: Get would mix two Puts.
		readTx:     &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead},
		lockWrites: "SELECT value FROM generation WHERE id = 1 FOR UPDATE",
	}
)

// q returns query as this dialect runs it. PostgreSQL's form is built on
// the first use of each query string and cached, so the hot path does one
// map lookup.
func (d *dialect) q(query string) string {
	if !d.postgres {
		return query
	}
	if r, ok := d.queries.Load(query); ok {
		return r.(string)
	}
	r := toPostgres(query)
	d.queries.Store(query, r)
	return r
}

// pgPrefix is put before each catalog table's name on PostgreSQL, where the
// database is shared with the other components and maybe other programs.
const pgPrefix = "switchboard_catalog_"

// isTable reports whether an identifier names a catalog table. No column
// bears a table's name, so every such identifier outside a literal is a
// table (or a column qualified by its table).
func isTable(id string) bool {
	for _, t := range tables {
		if strings.EqualFold(id, t) {
			return true
		}
	}
	return false
}

// toPostgres rewrites a query written for SQLite: ? becomes $1, $2, ...,
// and each table name gets pgPrefix. String literals, quoted identifiers
// and comments are left as they are.
func toPostgres(query string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(query) && query[j] != c {
				j++
			}
			j = min(j+1, len(query))
			b.WriteString(query[i:j])
			i = j
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i
			}
			b.WriteString(query[i : i+j])
			i += j
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			i++
		case c == '_' || 'a' <= c|0x20 && c|0x20 <= 'z':
			j := i + 1
			for j < len(query) && (query[j] == '_' || 'a' <= query[j]|0x20 && query[j]|0x20 <= 'z' || '0' <= query[j] && query[j] <= '9') {
				j++
			}
			if isTable(query[i:j]) {
				b.WriteString(pgPrefix)
			}
			b.WriteString(query[i:j])
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// OpenPostgres opens the catalog kept in a PostgreSQL database that
// several replicas share (settings.store, docs/team.md), bringing its
// tables up to date first (pgstore.Migrate, component "catalog"). The
// catalog is the same as a file's, pins included: what one replica writes
// the others read, and each replica's search index follows the writes of
// all. storeKey, settings.store.key, signs the pins with a key derived from
// it: a pin that something without the key wrote or changed in the
// database is refused when read (ErrPinForged), since replicas act on
// them. A nil storeKey signs nothing and checks nothing (a reader that
// never reads pins). The caller owns db: Close leaves it open.
func OpenPostgres(ctx context.Context, db *sql.DB, storeKey []byte) (*Catalog, error) {
	if db == nil {
		return nil, errors.New("opening the catalog in PostgreSQL: no database")
	}
	if err := pgstore.Migrate(ctx, db, "catalog", pgSchema()); err != nil {
		return nil, fmt.Errorf("opening the catalog in PostgreSQL: %w", err)
	}
	c := &Catalog{db: db, d: postgresDialect, path: "", borrowed: true, writes: make(chan struct{}, 1)}
	if storeKey != nil {
		c.pinKey = pgstore.DeriveKey(storeKey, PinPurpose)
		if err := pgstore.Once(ctx, db, "catalog pin signatures", c.signUnsigned); err != nil {
			return nil, fmt.Errorf("opening the catalog in PostgreSQL: signing the pins written before pins were signed: %w", err)
		}
	}
	return c, nil
}

// PinPurpose names the key that signs the pins among those derived from
// the store's key (pgstore.DeriveKey).
const PinPurpose = "pins"

// signUnsigned signs the pins written before pins were signed (the
// migration to version 2 left their MAC empty), once for the database:
// they are taken as they stand, as every replica took them until then.
// From then on a pin whose MAC does not verify is refused.
func (c *Catalog) signUnsigned(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, c.d.q(`SELECT server, tool, hash, def, first_seen, pending, pending_def, pending_at FROM pins WHERE mac = ''`))
	if err != nil {
		return err
	}
	unsigned := &Catalog{d: c.d} // reads without checking MACs
	var pins []Pin
	if err := unsigned.scanPins(rows, func(p Pin) { pins = append(pins, p) }); err != nil {
		return err
	}
	return setPins(ctx, tx, c.d, pins, c.pinKey)
}

// pgSchema returns the migration steps of the catalog on PostgreSQL:
// steps[v] takes version v to v+1. Version 1 has the tables and columns of
// the SQLite file's schema 4, in PostgreSQL's types; a later change to the
// catalog's tables appends a step here and to migrations. Version 2 adds
// each pin's MAC (see OpenPostgres).
func pgSchema() []string {
	return []string{toPostgres(strings.Join([]string{
		`CREATE TABLE servers (
			name         TEXT PRIMARY KEY,
			hash         TEXT NOT NULL,
			instructions TEXT NOT NULL,
			keywords     TEXT NOT NULL,
			fetched_at   BIGINT NOT NULL
		)`,
		`CREATE TABLE tools (
			server        TEXT NOT NULL,
			seq           BIGINT NOT NULL,
			name          TEXT NOT NULL,
			title         TEXT NOT NULL,
			description   TEXT NOT NULL,
			input_schema  TEXT,
			output_schema TEXT,
			annotations   TEXT,
			extra         TEXT,
			params        TEXT NOT NULL,
			PRIMARY KEY (server, seq)
		)`,
		`CREATE TABLE resources (
			server TEXT NOT NULL,
			seq    BIGINT NOT NULL,
			uri    TEXT NOT NULL,
			name   TEXT NOT NULL,
			doc    TEXT NOT NULL,
			PRIMARY KEY (server, seq)
		)`,
		`CREATE TABLE resource_templates (
			server       TEXT NOT NULL,
			seq          BIGINT NOT NULL,
			uri_template TEXT NOT NULL,
			name         TEXT NOT NULL,
			doc          TEXT NOT NULL,
			PRIMARY KEY (server, seq)
		)`,
		`CREATE TABLE prompts (
			server TEXT NOT NULL,
			seq    BIGINT NOT NULL,
			name   TEXT NOT NULL,
			doc    TEXT NOT NULL,
			PRIMARY KEY (server, seq)
		)`,
		`CREATE TABLE generation (
			id    INTEGER PRIMARY KEY CHECK (id = 1),
			value BIGINT NOT NULL
		)`,
		`INSERT INTO generation (id, value) VALUES (1, 1)`,
		// Identity values are allocated as rows are inserted, not as they
		// commit; writers take turns (dialect.lockWrites), so ids still
		// become visible in order (see vectors.load).
		`CREATE TABLE embeddings (
			id     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			model  TEXT NOT NULL,
			hash   TEXT NOT NULL,
			vector BYTEA NOT NULL,
			UNIQUE (model, hash)
		)`,
		`CREATE TABLE failures (
			server TEXT PRIMARY KEY,
			hash   TEXT NOT NULL,
			class  TEXT NOT NULL,
			error  TEXT NOT NULL,
			at     BIGINT NOT NULL
		)`,
		`CREATE TABLE pins (
			server      TEXT NOT NULL,
			tool        TEXT NOT NULL,
			hash        TEXT NOT NULL,
			def         TEXT NOT NULL,
			first_seen  BIGINT NOT NULL,
			pending     TEXT NOT NULL,
			pending_def TEXT NOT NULL,
			pending_at  BIGINT NOT NULL,
			PRIMARY KEY (server, tool)
		)`,
	}, ";\n")),
		toPostgres(`ALTER TABLE pins ADD COLUMN mac TEXT NOT NULL DEFAULT ''`),
	}
}
