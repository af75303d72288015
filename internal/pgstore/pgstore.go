// Package pgstore opens the PostgreSQL database that replicas share when
// settings.store names one, and gives each component of the shared state
// what it needs to live there: versioned migrations that run once whichever
// replica comes first, and locks across replicas.
//
// Access is database/sql over pgx's stdlib driver, so that the catalog's
// code serves SQLite and PostgreSQL alike. Each component (the credential
// store, the catalog, the audit trail, the replica registry) owns its
// tables and its list of migration steps; Migrate records each component's
// version in one table, switchboard_schema.
package pgstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// Open connects to the database that dsn names (a postgres:// URL or
// key=value connection string) and checks that it answers within ctx. An
// error names the host, port, database and user, never the password.
func Open(ctx context.Context, dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors can quote the string: keep it out.
		return nil, errors.New("settings.store.postgres is not a PostgreSQL connection URL (write postgres://USER:PASSWORD@HOST:PORT/DATABASE; the value is not shown)")
	}
	where := fmt.Sprintf("PostgreSQL at %s:%d, database %q, user %q", cfg.Host, cfg.Port, cfg.Database, cfg.User)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", where, err)
	}
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(4)
	db.SetConnMaxIdleTime(time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connecting to %s: %w", where, redact(err, cfg.Password))
	}
	return db, nil
}

// redact keeps a password out of an error's text.
func redact(err error, password string) error {
	if password == "" {
		return err
	}
	return redacted{err, password}
}

type redacted struct {
	err      error
	password string
}

func (r redacted) Error() string {
	return strings.ReplaceAll(r.err.Error(), r.password, "[redacted]")
}

func (r redacted) Unwrap() error { return r.err }

// migrateLock is the advisory lock that migrations run under.
var migrateLock = lockID("switchboard/migrate")

// ErrNewerSchema reports a component whose tables a newer Switchboard
// wrote.
var ErrNewerSchema = errors.New("the shared store was migrated by a newer version of switchboard")

// Migrate brings component's tables to version len(steps): steps[i] takes
// version i to i+1, and runs in one transaction with the version's record.
// Every replica calls Migrate as it starts; they take turns under one
// advisory lock, so each step runs once, on whichever replica comes first.
// A component already at a higher version than it knows is an error: a
// replica must not run against tables a newer one shaped.
func Migrate(ctx context.Context, db *sql.DB, component string, steps []string) error {
	unlock, err := lock(ctx, db, migrateLock)
	if err != nil {
		return fmt.Errorf("migrating %s: waiting for the migration lock: %w", component, err)
	}
	defer unlock()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS switchboard_schema (
		component  TEXT PRIMARY KEY,
		version    INTEGER NOT NULL,
		updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
	)`); err != nil {
		return fmt.Errorf("migrating %s: %w", component, err)
	}
	var v int
	err = db.QueryRowContext(ctx, `SELECT version FROM switchboard_schema WHERE component = $1`, component).Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("migrating %s: reading its version: %w", component, err)
	}
	if v > len(steps) {
		return fmt.Errorf("%w: %s is at version %d, this switchboard knows %d (hint: upgrade this replica)", ErrNewerSchema, component, v, len(steps))
	}
	for ; v < len(steps); v++ {
		if err := step(ctx, db, component, v, steps[v]); err != nil {
			return fmt.Errorf("migrating %s to version %d: %w", component, v+1, err)
		}
	}
	return nil
}

// step runs one migration step and records the version it reaches.
// Once runs f, in a transaction, once for the database: the first
// replica to call it with name runs it, under the migration lock, and
// records it as done (in switchboard_once, not among the components'
// schema versions); later calls return at once. An error leaves it to be
// run again.
func Once(ctx context.Context, db *sql.DB, name string, f func(context.Context, *sql.Tx) error) error {
	unlock, err := lock(ctx, db, migrateLock)
	if err != nil {
		return fmt.Errorf("%s: waiting for the migration lock: %w", name, err)
	}
	defer unlock()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS switchboard_once (
		name    TEXT PRIMARY KEY,
		done_at TIMESTAMPTZ NOT NULL DEFAULT now()
	)`); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var done bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM switchboard_once WHERE name = $1)`, name).Scan(&done); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if done {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO switchboard_once (name) VALUES ($1)`, name); err != nil {
		return err
	}
	return tx.Commit()
}

func step(ctx context.Context, db *sql.DB, component string, from int, stmt string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, stmt); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO switchboard_schema (component, version) VALUES ($1, $2)
		ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version, updated_at = now()`, component, from+1); err != nil {
		return err
	}
	return tx.Commit()
}

// Versions returns each component's schema version, for status and
// readiness; an empty map before any migration.
func Versions(ctx context.Context, db *sql.DB) (map[string]int, error) {
	rows, err := db.QueryContext(ctx, `SELECT component, version FROM switchboard_schema`)
	if err != nil {
		var exists bool
		if db.QueryRowContext(ctx, `SELECT to_regclass('switchboard_schema') IS NOT NULL`).Scan(&exists) == nil && !exists {
			return map[string]int{}, nil
		}
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var c string
		var v int
		if err := rows.Scan(&c, &v); err != nil {
			return nil, err
		}
		out[c] = v
	}
	return out, rows.Err()
}

// Lock takes an exclusive lock named key across every replica that shares
// db, waiting until it is free or ctx ends. It is a PostgreSQL session
// advisory lock held on a connection of its own until unlock is called;
// if this process dies, PostgreSQL ends the session and frees the lock.
func Lock(ctx context.Context, db *sql.DB, key string) (unlock func(), err error) {
	return lock(ctx, db, lockID("switchboard/"+key))
}

// lockID maps a lock's name to PostgreSQL's 64-bit advisory lock key.
func lockID(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64())
}

// unlockTimeout bounds the unlock statement, which runs after the caller's
// context may have ended.
const unlockTimeout = 10 * time.Second

func lock(ctx context.Context, db *sql.DB, id int64) (unlock func(), err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, id); err != nil {
		// A cancelled wait may still have taken the lock as it was
		// cancelled: the connection goes, and with it any lock.
		discard(conn)
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
		defer cancel()
		var released bool
		if err := conn.QueryRowContext(ctx, `SELECT pg_advisory_unlock($1)`, id).Scan(&released); err != nil || !released {
			discard(conn)
			return
		}
		conn.Close()
	}, nil
}

// discard closes conn's connection to the server instead of returning it
// to the pool, and with it the session's advisory locks.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	conn.Close()
}
