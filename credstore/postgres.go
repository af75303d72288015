package credstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
)

// Postgres is a Store in a PostgreSQL database that replicas share
// (settings.store, docs/team.md): one row per key in the table
// switchboard_credentials, its value encrypted with AES-256-GCM under a
// 32-byte key that the database never sees, in the sealed format seal.go
// describes: a value copied to another key's row does not decrypt, and one
// written with another key fails with ErrWrongKey (see docs/auth.md for
// rotating the key).
//
// Lock is a PostgreSQL advisory lock (pgstore.Lock), which every replica
// on the database sees: two replicas that refresh one token take turns.
type Postgres struct {
	db    *sql.DB
	seal  *sealer
	where string
	// locks bounds the locks this store holds or waits for at once: each
	// holds a connection of db's pool for as long as it is held, and the
	// holder reads and writes through other connections of the same pool.
	// Without a bound, as many refreshes as the pool has connections
	// would take them all and wait for ever for one more. nil when db's
	// pool is unbounded.
	locks chan struct{}
}

// PostgresOptions are the optional settings of NewPostgres.
type PostgresOptions struct {
	// KeyRef says where the key came from, for errors: the reference in
	// settings.store.key, such as ${SWITCHBOARD_STORE_KEY}.
	KeyRef string
}

// PostgresKeySize is the size of a Postgres store's key: an AES-256 key.
const PostgresKeySize = KeySize

const (
	pgTable = "switchboard_credentials"
	// pgOpTimeout bounds one statement: the Store interface has no
	// context, and a database that stops answering must not hang a call.
	pgOpTimeout = 30 * time.Second
)

// pgSteps are the credential store's migrations (pgstore.Migrate).
var pgSteps = []string{
	`CREATE TABLE switchboard_credentials (
		key        TEXT PRIMARY KEY,
		value      BYTEA NOT NULL,
		updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
	)`,
}

// NewPostgres returns the credential store in db, whose values key
// encrypts; it creates or updates the store's table first (pgstore.Migrate,
// component "credentials"). key must be 32 bytes.
func NewPostgres(ctx context.Context, db *sql.DB, key []byte, opts *PostgresOptions) (*Postgres, error) {
	var keyRef string
	if opts != nil {
		keyRef = opts.KeyRef
	}
	s, err := newSealer(key, pgKeyName(keyRef))
	if err != nil {
		return nil, err
	}
	s.in = "in PostgreSQL"
	s.wrongKeyHint = "set " + refVar(keyRef) + " to the key it was written with, the one the other replicas use"
	s.damagedHint = "the row was altered or copied from another key"
	p := &Postgres{db: db, seal: s}
	if pool := db.Stats().MaxOpenConnections; pool > 0 {
		p.locks = make(chan struct{}, max(1, pool/2))
	}
	if err := pgstore.Migrate(ctx, db, "credentials", pgSteps); err != nil {
		return nil, err
	}
	if err := p.checkKey(ctx); err != nil {
		return nil, err
	}
	var name, host string
	var port int
	if err := db.QueryRowContext(ctx, `SELECT current_database(), COALESCE(host(inet_server_addr()), ''), COALESCE(inet_server_port(), 0)`).Scan(&name, &host, &port); err != nil {
		return nil, fmt.Errorf("reading the database's name: %w", err)
	}
	p.where = "database " + name + " over a local socket"
	if host != "" {
		p.where = "database " + name + " on " + hostPort(host, port)
	}
	return p, nil
}

func hostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// Name implements Store.
func (p *Postgres) Name() string { return "postgres" }

// Where says which database the store is in: "database D on HOST:PORT",
// the server's address as the server sees it. It never holds a password.
func (p *Postgres) Where() string { return p.where }

// pgKeyName is how errors name the key of settings.store.
func pgKeyName(keyRef string) string {
	if keyRef != "" {
		return "settings.store.key (" + keyRef + ")"
	}
	return "the credential store's key"
}

// refVar is how a hint names what to set: the variable of a ${VAR}
// reference, else the reference, else "the key".
func refVar(keyRef string) string {
	if v := strings.TrimSuffix(strings.TrimPrefix(keyRef, "${"), "}"); v != "" {
		return v
	}
	return "the key"
}

func opContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), pgOpTimeout)
}

// Get implements Store.
func (p *Postgres) Get(key string) ([]byte, bool, error) {
	if err := CheckKey(key); err != nil {
		return nil, false, err
	}
	ctx, cancel := opContext()
	defer cancel()
	var sealed []byte
	err := p.db.QueryRowContext(ctx, `SELECT value FROM `+pgTable+` WHERE key = $1`, key).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading credential %q from PostgreSQL: %w", key, err)
	}
	v, err := p.seal.open(key, sealed)
	if err != nil {
		return nil, false, err
	}
	return v, true, nil
}

// Set implements Store.
func (p *Postgres) Set(key string, value []byte) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	ctx, cancel := opContext()
	defer cancel()
	if _, err := p.db.ExecContext(ctx, `INSERT INTO `+pgTable+` (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`, key, p.seal.seal(key, value)); err != nil {
		return fmt.Errorf("storing credential %q in PostgreSQL: %w", key, err)
	}
	return nil
}

// Delete implements Store.
func (p *Postgres) Delete(key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	ctx, cancel := opContext()
	defer cancel()
	if _, err := p.db.ExecContext(ctx, `DELETE FROM `+pgTable+` WHERE key = $1`, key); err != nil {
		return fmt.Errorf("deleting credential %q from PostgreSQL: %w", key, err)
	}
	return nil
}

// Keys implements Store.
func (p *Postgres) Keys(prefix string) ([]string, error) {
	ctx, cancel := opContext()
	defer cancel()
	rows, err := p.db.QueryContext(ctx, `SELECT key FROM `+pgTable+` WHERE left(key, length($1)) = $1`, prefix)
	if err != nil {
		return nil, fmt.Errorf("listing credentials in PostgreSQL: %w", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("listing credentials in PostgreSQL: %w", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing credentials in PostgreSQL: %w", err)
	}
	slices.Sort(keys) // byte order, as the other stores, whatever the collation
	return keys, nil
}

// Lock implements Store with an advisory lock that every replica on the
// database sees (pgstore.Lock). If this process dies, the database ends
// its session and frees the lock.
func (p *Postgres) Lock(ctx context.Context, key string) (func(), error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	if p.locks != nil {
		select {
		case p.locks <- struct{}{}:
		default:
			select {
			case p.locks <- struct{}{}:
			case <-ctx.Done():
				return nil, fmt.Errorf("locking credential %q: waiting while this process holds %d other locks: %w", key, cap(p.locks), context.Cause(ctx))
			}
		}
	}
	unlock, err := pgstore.Lock(ctx, p.db, "credentials/"+key)
	if err != nil {
		p.release()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("locking credential %q: another process holds it: %w", key, context.Cause(ctx))
		}
		return nil, fmt.Errorf("locking credential %q in PostgreSQL: %w", key, err)
	}
	var once sync.Once
	return func() { once.Do(func() { unlock(); p.release() }) }, nil
}

// release lets another lock take the place of one let go.
func (p *Postgres) release() {
	if p.locks != nil {
		<-p.locks
	}
}

// checkKey opens the value written last, so that a store opened with
// another key than the replicas that wrote it fails at once, not at the
// first token refresh.
func (p *Postgres) checkKey(ctx context.Context) error {
	var key string
	var sealed []byte
	err := p.db.QueryRowContext(ctx, `SELECT key, value FROM `+pgTable+` ORDER BY updated_at DESC, key LIMIT 1`).Scan(&key, &sealed)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("reading the credential store in PostgreSQL: %w", err)
	}
	_, err = p.seal.open(key, sealed)
	return err
}

// Ping checks that the database answers and the store's table is there,
// for status and readiness.
func (p *Postgres) Ping(ctx context.Context) error {
	var n int
	if err := p.db.QueryRowContext(ctx, `SELECT count(*) FROM `+pgTable).Scan(&n); err != nil {
		return fmt.Errorf("the credential store in PostgreSQL (%s) does not answer: %w", p.where, err)
	}
	return nil
}
