package switchboard_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

func storeConfig(credentialStore string) *config.Config {
	return &config.Config{Settings: config.Settings{CredentialStore: credentialStore,
		Store: &config.Store{Postgres: "${DATABASE_URL}", Key: "${SWITCHBOARD_STORE_KEY}"}}}
}

func lookup(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

// TestOpenStore: OpenStore opens settings.store's database and the
// credential store in it, which an engine then uses; without
// settings.store it opens nothing.
func TestOpenStore(t *testing.T) {
	if st, err := switchboard.OpenStore(t.Context(), &config.Config{}, nil); st != nil || err != nil {
		t.Fatalf("OpenStore without settings.store = %v, %v; want nothing", st, err)
	}
	key := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	cfg := storeConfig("")
	st, err := switchboard.OpenStore(t.Context(), cfg, lookup(map[string]string{"DATABASE_URL": pgtest.DSN(t), "SWITCHBOARD_STORE_KEY": key}))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Credentials.Set("secret/x", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := st.Ping(t.Context()); err != nil {
		t.Error(err)
	}
	if v, err := st.Schema(t.Context()); err != nil || v["credentials"] != 1 {
		t.Errorf("Schema = %v, %v; want credentials at version 1", v, err)
	}
	eng, err := switchboard.New(t.Context(), cfg, &switchboard.Options{Store: st.DB, StoreKey: st.Key, Credentials: st.Credentials, CatalogPath: t.TempDir() + "/catalog.db"})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Close(); err != nil {
		t.Error(err)
	}
}

// TestOpenStoreErrors: each way settings.store cannot be opened is one
// line that says what to fix.
func TestOpenStoreErrors(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	for _, c := range []struct {
		name string
		cfg  *config.Config
		vars map[string]string
		want string
	}{
		{"credentialStore too", storeConfig("keychain"), nil, `settings.credentialStore is "keychain" and settings.store is set: settings.store keeps credentials in PostgreSQL, which replaces settings.credentialStore (remove one of them)`},
		{"unset URL", storeConfig(""), map[string]string{"SWITCHBOARD_STORE_KEY": key}, "settings.store.postgres: the variable DATABASE_URL is not set (set it in the environment of switchboard)"},
		{"short key", storeConfig(""), map[string]string{"DATABASE_URL": "postgres://127.0.0.1:1/x", "SWITCHBOARD_STORE_KEY": "c2hvcnQ="}, "settings.store.key: ${SWITCHBOARD_STORE_KEY} must hold 32 random bytes in standard base64"},
		{"not a URL", storeConfig(""), map[string]string{"DATABASE_URL": "postgres://u:pw-canary@[::1", "SWITCHBOARD_STORE_KEY": key}, "settings.store.postgres is not a PostgreSQL connection URL"},
		{"no answer", storeConfig(""), map[string]string{"DATABASE_URL": "postgres://sb:pw-canary@127.0.0.1:1/shared?sslmode=disable", "SWITCHBOARD_STORE_KEY": key},
			`settings.store: connecting to PostgreSQL at 127.0.0.1:1, database "shared", user "sb": `},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := switchboard.OpenStore(t.Context(), c.cfg, lookup(c.vars))
			if st != nil || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("OpenStore = %v, %v; want an error saying %q", st, err, c.want)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || strings.Contains(msg, "pw-canary") || strings.Contains(msg, key) {
				t.Errorf("the error is not one line, or shows a password or the key: %q", msg)
			}
		})
	}
}
