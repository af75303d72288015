// Package replicas is the registry of the serve --http replicas that share
// a PostgreSQL store: each registers its id and the URL the others reach it
// at, and renews its record while it runs, so that a replica that gets the
// continuation of a call suspended on another can forward it there
// (front.Registry).
//
// Each record carries a MAC made with a key derived from the store's key
// (pgstore.MAC): a record written by anything that can write to the
// database but lacks the key is ignored, so it cannot send forwarded
// requests elsewhere.
package replicas

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
)

// Component is the registry's name in pgstore's schema versions.
const Component = "replicas"

var steps = []string{
	`CREATE TABLE switchboard_replicas (
		id        TEXT PRIMARY KEY,
		url       TEXT NOT NULL,
		started   TIMESTAMPTZ NOT NULL DEFAULT now(),
		last_seen TIMESTAMPTZ NOT NULL DEFAULT now()
	)`,
	// The MAC of (id, url) under the registry's key; "" in records written
	// before it, which no longer verify.
	`ALTER TABLE switchboard_replicas ADD COLUMN mac TEXT NOT NULL DEFAULT ''`,
}

// Purpose names the registry's key among those derived from the store's
// key (pgstore.DeriveKey).
const Purpose = "replica registry"

// Renewal is how often a replica renews its record, and StaleAfter how
// long a record stands without renewal: a replica killed outright (its
// record left behind) counts as gone once it is that old.
const (
	Renewal    = 10 * time.Second
	StaleAfter = 30 * time.Second
)

// Registry is the registry in a PostgreSQL database, and this replica's
// record in it. Lookup is front.Registry's.
type Registry struct {
	db      *sql.DB
	id, url string
	key     []byte // derived from the store's key for Purpose

	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	closeErr error
}

// Migrate brings the registry's table up to date (pgstore.Migrate).
func Migrate(ctx context.Context, db *sql.DB) error {
	return pgstore.Migrate(ctx, db, Component, steps)
}

// Open migrates the registry's table and returns the registry. With a url,
// it registers replica id at it and renews the record every Renewal until
// Close; without, it only looks others up (a replica others cannot
// reach). storeKey is settings.store.key, which every replica shares: a
// key derived from it (for Purpose) signs this replica's record and checks
// the others'.
func Open(ctx context.Context, db *sql.DB, id, url string, storeKey []byte) (*Registry, error) {
	if len(storeKey) == 0 {
		return nil, errors.New("the replica registry needs the store's key (settings.store.key)")
	}
	if err := Migrate(ctx, db); err != nil {
		return nil, err
	}
	r := &Registry{db: db, id: id, url: url, key: pgstore.DeriveKey(storeKey, Purpose), stop: make(chan struct{}), done: make(chan struct{})}
	if url == "" {
		close(r.done)
		return r, nil
	}
	if err := r.renew(ctx); err != nil {
		return nil, fmt.Errorf("registering replica %s: %w", id, err)
	}
	go r.renewing()
	return r, nil
}

func (r *Registry) renew(ctx context.Context) error {
	_, err := r.db.ExecContext(ctx, `INSERT INTO switchboard_replicas (id, url, mac) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, mac = EXCLUDED.mac, last_seen = now()`, r.id, r.url, pgstore.MAC(r.key, r.id, r.url))
	return err
}

// renewing renews the record until Close. A renewal that fails is tried
// again at the next tick: the record stands StaleAfter, three renewals.
func (r *Registry) renewing() {
	defer close(r.done)
	t := time.NewTicker(Renewal)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), Renewal)
			_ = r.renew(ctx)
			// Records of replicas long gone are of no use to anyone.
			_, _ = r.db.ExecContext(ctx, `DELETE FROM switchboard_replicas WHERE last_seen < now() - interval '1 hour'`)
			cancel()
		}
	}
}

// ErrForged is matched by the error of Lookup for a record whose MAC does
// not verify: it was not written by a replica holding the store's key.
var ErrForged = errors.New("its record in the registry is not signed with the store's key (settings.store.key), so it was not written by a replica of this team: ignored")

// Lookup returns the URL replica id registered, and false when no replica
// with that id has renewed its record within StaleAfter (by the database's
// clock, which every replica shares). A record whose MAC does not verify
// is an error matching ErrForged, and its URL is not returned.
func (r *Registry) Lookup(ctx context.Context, id string) (string, bool, error) {
	var url, mac string
	err := r.db.QueryRowContext(ctx, `SELECT url, mac FROM switchboard_replicas
		WHERE id = $1 AND last_seen > now() - make_interval(secs => $2)`, id, StaleAfter.Seconds()).Scan(&url, &mac)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("looking up replica %s: %w", id, err)
	}
	if !pgstore.ValidMAC(r.key, mac, id, url) {
		return "", false, fmt.Errorf("looking up replica %s: %w", id, ErrForged)
	}
	return url, true, nil
}

// Close stops renewing the record and removes it: the replica is gone.
// It does not close the database.
func (r *Registry) Close() error {
	r.once.Do(func() {
		close(r.stop)
		<-r.done
		if r.url == "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, r.closeErr = r.db.ExecContext(ctx, `DELETE FROM switchboard_replicas WHERE id = $1`, r.id)
	})
	return r.closeErr
}
