package switchboard

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/pgstore"
)

// Store is the state that replicas share when settings.store names a
// PostgreSQL database (docs/team.md): the database, for [Options].Store,
// where the catalog and the audit trail live, and the credential store in
// it, for [Options].Credentials. [OpenStore] opens it.
type Store struct {
	DB          *sql.DB
	Credentials *credstore.Postgres
	// Key is settings.store.key, which every replica shares: besides
	// encrypting the credentials, keys derived from it sign what replicas
	// write for one another (Options.StoreKey, docs/team.md).
	Key []byte
}

// storeConnectTimeout bounds connecting to the database: an address that
// does not answer fails the command instead of hanging it.
const storeConnectTimeout = 20 * time.Second

// OpenStore opens the database that cfg's settings.store names, its
// references resolved with lookup (nil: os.LookupEnv), brings its tables
// up to date, and opens the credential store in it, checking that
// settings.store.key is the key its credentials were written with. It
// returns nil, and no error, when settings.store is not set. Close the
// store after the engine that uses it.
//
// Each error is one line that says what to fix, and never holds the
// password or the key: a variable that is not set, a database that does
// not answer (named by host, port, database and user), a key that differs
// from the one the stored credentials were written with.
func OpenStore(ctx context.Context, cfg *config.Config, lookup func(string) (string, bool)) (*Store, error) {
	st := cfg.Settings.Store
	if st == nil {
		return nil, nil
	}
	if cfg.Settings.CredentialStore != "" {
		return nil, fmt.Errorf("settings.credentialStore is %q and settings.store is set: settings.store keeps credentials in PostgreSQL, which replaces settings.credentialStore (remove one of them)", cfg.Settings.CredentialStore)
	}
	if lookup == nil {
		lookup = os.LookupEnv
	}
	dsn, key, err := st.Resolve(lookup)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, storeConnectTimeout)
	defer cancel()
	db, err := pgstore.Open(cctx, dsn)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("settings.store: %s (hint: check that PostgreSQL runs there and that %s names it)", oneLine(err), strings.Trim(st.Postgres, "${}"))
	}
	creds, err := credstore.NewPostgres(ctx, db, key, &credstore.PostgresOptions{KeyRef: st.Key})
	if err != nil {
		db.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("settings.store: %s", oneLine(err))
	}
	return &Store{DB: db, Credentials: creds, Key: key}, nil
}

// oneLine joins the lines of an error's text.
func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// Close closes the database. A nil Store is closed already.
func (s *Store) Close() error {
	if s == nil {
		return nil
	}
	return s.DB.Close()
}

// Ping says whether the store answers: the database, and the credential
// store's table in it.
func (s *Store) Ping(ctx context.Context) error {
	if s == nil {
		return errors.New("no shared store: settings.store is not set")
	}
	return s.Credentials.Ping(ctx)
}

// Schema returns each component's schema version in the store
// (credentials, catalog, audit, …), for status.
func (s *Store) Schema(ctx context.Context) (map[string]int, error) {
	if s == nil {
		return nil, nil
	}
	return pgstore.Versions(ctx, s.DB)
}
