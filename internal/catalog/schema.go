package catalog

import (
	"context"
	"database/sql"
	"fmt"
)

// schemaVersion is stored in PRAGMA user_version. The catalog is a cache:
// a file with an older version is rebuilt empty (servers are listed again),
// unless a step in migrations upgrades it in place.
const schemaVersion = 4

// schema creates every table of schemaVersion.
//
// The generation row counts writes from any process: each search compares it
// with the generation its index was built from.
var schema = []string{
	`CREATE TABLE servers (
		name         TEXT PRIMARY KEY,
		hash         TEXT NOT NULL,
		instructions TEXT NOT NULL,
		keywords     TEXT NOT NULL, -- JSON {"toolNameOrGlob": ["word", ...]}
		fetched_at   INTEGER NOT NULL -- Unix milliseconds
	) STRICT`,
	`CREATE TABLE tools (
		server        TEXT NOT NULL,
		seq           INTEGER NOT NULL, -- order as listed by the server
		name          TEXT NOT NULL,
		title         TEXT NOT NULL,
		description   TEXT NOT NULL,
		input_schema  TEXT, -- JSON
		output_schema TEXT, -- JSON
		annotations   TEXT, -- JSON
		extra         TEXT, -- JSON of the remaining fields (_meta, icons)
		params        TEXT NOT NULL, -- parameter names and descriptions, for search
		PRIMARY KEY (server, seq)
	) STRICT`,
	`CREATE TABLE resources (
		server TEXT NOT NULL,
		seq    INTEGER NOT NULL,
		uri    TEXT NOT NULL,
		name   TEXT NOT NULL,
		doc    TEXT NOT NULL, -- JSON of the mcp.Resource
		PRIMARY KEY (server, seq)
	) STRICT`,
	`CREATE TABLE resource_templates (
		server       TEXT NOT NULL,
		seq          INTEGER NOT NULL,
		uri_template TEXT NOT NULL,
		name         TEXT NOT NULL,
		doc          TEXT NOT NULL, -- JSON of the mcp.ResourceTemplate
		PRIMARY KEY (server, seq)
	) STRICT`,
	`CREATE TABLE prompts (
		server TEXT NOT NULL,
		seq    INTEGER NOT NULL,
		name   TEXT NOT NULL,
		doc    TEXT NOT NULL, -- JSON of the mcp.Prompt, arguments included
		PRIMARY KEY (server, seq)
	) STRICT`,
	`CREATE TABLE generation (
		id    INTEGER PRIMARY KEY CHECK (id = 1),
		value INTEGER NOT NULL
	) STRICT`,
	`INSERT INTO generation (id, value) VALUES (1, 1)`,
	embeddingsTable,
	failuresTable,
	pinsTable,
}

// embeddingsTable (version 2) holds the vectors of semantic search, keyed by
// the embedding model and a hash of the embedded text (see embedText): a
// tool whose text changes gets a new key, and so a new vector; identical
// texts share one. Writing vectors does not bump the generation, since the
// lexical index does not read them; readers load the rows whose id is above
// the last they saw (ids only grow: AUTOINCREMENT).
const embeddingsTable = `CREATE TABLE embeddings (
		id     INTEGER PRIMARY KEY AUTOINCREMENT,
		model  TEXT NOT NULL,
		hash   TEXT NOT NULL, -- hex of the first 16 bytes of SHA-256 of the text
		vector BLOB NOT NULL, -- float32 little-endian, unit length
		UNIQUE (model, hash)
	) STRICT`

// failuresTable (version 3) holds each server's last failure (see
// Failure). Search does not read it: writing it does not bump the
// generation.
const failuresTable = `CREATE TABLE failures (
		server TEXT PRIMARY KEY,
		hash   TEXT NOT NULL,
		class  TEXT NOT NULL,
		error  TEXT NOT NULL,
		at     INTEGER NOT NULL -- Unix microseconds: a failure and a connection rarely share one
	) STRICT`

// tables lists every table, for rebuilding.
var tables = []string{"servers", "tools", "resources", "resource_templates", "prompts", "generation", "embeddings", "failures", "pins"}

// migrations[v] upgrades a file of version v to v+1 in place. A schema
// change adds a step here, or leaves it out to rebuild the file empty.
var migrations = map[int][]string{
	1: {embeddingsTable}, // semantic search vectors
	2: {failuresTable},   // last failures
	3: {pinsTable},       // tool pinning
}

// fileSchema is the schema of a SQLite file: the catalog's (a cache), or
// the pins' (state; see OpenPinFile).
type fileSchema struct {
	version    int              // stored in PRAGMA user_version
	create     []string         // every table of version
	migrations map[int][]string // migrations[v] upgrades a file of version v to v+1 in place
	tables     []string         // every table, for rebuilding

	// cache: a file of an older version that no migration upgrades is
	// rebuilt empty. Without it that is an error: state is never dropped.
	cache bool
	// created, when set, runs in the transaction that creates a new file,
	// after its tables.
	created func(ctx context.Context, tx *sql.Tx) error
	// newer is the hint for a file of a newer version.
	newer string
}

var catalogSchema = &fileSchema{
	version: schemaVersion, create: schema, migrations: migrations, tables: tables, cache: true,
	newer: "upgrade switchboard, or delete the file to rebuild it",
}

// migrate brings the file's schema to its version in one immediate
// transaction, so two processes opening a new file at once do not race.
func (c *Catalog) migrate(ctx context.Context) error {
	fs := c.schema
	// Up to date is the usual case, and learning it takes no write lock: a
	// command that opens the catalog does not wait for a writer (a serve
	// refreshing its catalog) to find that out.
	var v int
	if err := c.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("reading schema version: %w", err)
	}
	if v == fs.version {
		return nil
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Once more under the lock: another process may have migrated since.
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("reading schema version: %w", err)
	}
	switch {
	case v == fs.version:
		return nil
	case v > fs.version:
		return fmt.Errorf("%w (schema %d, this one reads %d)\nhint: %s", ErrNewerSchema, v, fs.version, fs.newer)
	}
	stmts := fs.create
	if v > 0 {
		if stmts, err = fs.upgrade(v); err != nil {
			return err
		}
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("creating schema %d: %w", fs.version, err)
		}
	}
	if v == 0 && fs.created != nil {
		if err := fs.created(ctx, tx); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", fs.version)); err != nil {
		return fmt.Errorf("setting schema version: %w", err)
	}
	return tx.Commit()
}

// upgrade returns the statements that take version v to fs.version: the
// migration steps if every one exists, else (for a cache) drop everything
// and recreate.
func (fs *fileSchema) upgrade(v int) ([]string, error) {
	var stmts []string
	for from := v; from < fs.version; from++ {
		step, ok := fs.migrations[from]
		if !ok {
			if !fs.cache {
				return nil, fmt.Errorf("no migration from schema %d to %d: this is a bug", from, from+1)
			}
			stmts = nil
			for _, t := range fs.tables {
				stmts = append(stmts, "DROP TABLE IF EXISTS "+t)
			}
			return append(stmts, fs.create...), nil
		}
		stmts = append(stmts, step...)
	}
	return stmts, nil
}
