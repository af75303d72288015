package credstore_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

const keyRef = "${SWITCHBOARD_STORE_KEY}"

// testKey is a 32-byte key that differs with n.
func testKey(n byte) []byte { return bytes.Repeat([]byte{n}, credstore.PostgresKeySize) }

func pgDB(t *testing.T) *sql.DB { return pgtest.DB(t) }

// openDB opens another handle on the database at dsn: another replica's.
func openDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := pgstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newPostgres(t *testing.T, db *sql.DB, key []byte) *credstore.Postgres {
	t.Helper()
	s, err := credstore.NewPostgres(t.Context(), db, key, &credstore.PostgresOptions{KeyRef: keyRef})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rawValue(t *testing.T, db *sql.DB, key string) []byte {
	t.Helper()
	var v []byte
	if err := db.QueryRowContext(t.Context(), `SELECT value FROM switchboard_credentials WHERE key = $1`, key).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPostgresEncryptedAtRest: the row holds neither the value nor any
// long part of it, and the same value stored twice is stored differently
// (a fresh nonce each time).
func TestPostgresEncryptedAtRest(t *testing.T) {
	db := pgDB(t)
	s := newPostgres(t, db, testKey(1))
	const canary = "pg-canary-7c1e0d: the plaintext that must not reach the table"
	if err := s.Set("secret/tok", []byte(canary)); err != nil {
		t.Fatal(err)
	}
	first := rawValue(t, db, "secret/tok")
	for i := 0; i+8 <= len(canary); i++ {
		if bytes.Contains(first, []byte(canary[i:i+8])) {
			t.Fatalf("the row holds %q of the plaintext: % x", canary[i:i+8], first)
		}
	}
	if first[0] != 1 {
		t.Errorf("format byte %d, want 1", first[0])
	}
	if len(first) != 1+4+12+len(canary)+16 {
		t.Errorf("row of %d bytes, want header, nonce, ciphertext and tag (%d)", len(first), 1+4+12+len(canary)+16)
	}
	if err := s.Set("secret/tok", []byte(canary)); err != nil {
		t.Fatal(err)
	}
	if second := rawValue(t, db, "secret/tok"); bytes.Equal(first, second) || bytes.Equal(first[5:17], second[5:17]) {
		t.Error("the same value was stored twice with the same nonce")
	}
	if v, ok, err := s.Get("secret/tok"); string(v) != canary || !ok || err != nil {
		t.Errorf("Get = %q, %v, %v", v, ok, err)
	}
}

// TestPostgresWrongKey: a store opened with another key than the one that
// wrote the values fails at once, saying so and naming the variable; one
// that was open before the values were written fails on Get the same way.
// Neither error holds a value or a key.
func TestPostgresWrongKey(t *testing.T) {
	db := pgDB(t)
	other := newPostgres(t, db, testKey(2)) // opened while the table is empty
	s := newPostgres(t, db, testKey(1))
	const canary = "pg-canary-wrongkey"
	if err := s.Set("oauth/api/token", []byte(canary)); err != nil {
		t.Fatal(err)
	}
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, credstore.ErrWrongKey) {
			t.Fatalf("%s = %v, want ErrWrongKey", what, err)
		}
		msg := err.Error()
		for _, want := range []string{"different key", "settings.store.key (" + keyRef + ")", `"oauth/api/token"`} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q does not say %q", what, msg, want)
			}
		}
		if strings.Contains(msg, canary) || strings.Contains(msg, "\x01\x01\x01") || strings.Contains(msg, "\n") {
			t.Errorf("%s: %q holds a value, a key or more than one line", what, msg)
		}
	}
	_, err := credstore.NewPostgres(t.Context(), db, testKey(2), &credstore.PostgresOptions{KeyRef: keyRef})
	check("NewPostgres with another key", err)
	_, _, err = other.Get("oauth/api/token")
	check("Get through a store with another key", err)
}

// TestPostgresValueBoundToKey: a value copied into another key's row does
// not decrypt there.
func TestPostgresValueBoundToKey(t *testing.T) {
	db := pgDB(t)
	s := newPostgres(t, db, testKey(1))
	if err := s.Set("secret/a", []byte("for a only")); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("secret/b", []byte("b")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), `UPDATE switchboard_credentials SET value = (SELECT value FROM switchboard_credentials WHERE key = 'secret/a') WHERE key = 'secret/b'`); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.Get("secret/b")
	if err == nil || !strings.Contains(err.Error(), "altered or copied from another key") || strings.Contains(err.Error(), "for a only") {
		t.Errorf("Get of a copied value = %v", err)
	}
	if _, err := db.ExecContext(t.Context(), `UPDATE switchboard_credentials SET value = '\x09'::bytea WHERE key = 'secret/b'`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get("secret/b"); err == nil || !strings.Contains(err.Error(), "not in a format this switchboard reads (format 9)") {
		t.Errorf("Get of an unknown format = %v", err)
	}
}

// TestPostgresReplicas: two handles on one database (two replicas) see
// each other's values, and exclude each other under Lock.
func TestPostgresReplicas(t *testing.T) {
	dsn := pgtest.DSN(t)
	var a, b *credstore.Postgres
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, dst := range []**credstore.Postgres{&a, &b} {
		db := openDB(t, dsn)
		wg.Go(func() { // both migrate at once: one creates the table
			*dst, errs[i] = credstore.NewPostgres(t.Context(), db, testKey(1), nil)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if err := a.Set("secret/shared", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := b.Get("secret/shared"); string(v) != "v" || !ok || err != nil {
		t.Errorf("the other replica's Get = %q, %v, %v", v, ok, err)
	}
	unlock, err := a.Lock(t.Context(), "oauth/x")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := b.Lock(t.Context(), "oauth/x")
		if err == nil {
			u()
		}
		got <- err
	}()
	pgtest.WaitLockWaiters(t, openDB(t, dsn), 1) // b waits for a's lock
	ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel()
	if _, err := b.Lock(ctx, "oauth/x"); err == nil || !strings.Contains(err.Error(), "another process holds it") {
		t.Errorf("the other replica's Lock while held = %v, want it to give up", err)
	}
	unlock()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

// TestPostgresDescribe: status names the database and the server, never
// the password.
func TestPostgresDescribe(t *testing.T) {
	dsn := pgtest.DSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	s := newPostgres(t, openDB(t, dsn), testKey(1))
	want := fmt.Sprintf("PostgreSQL store (database %s on 127.0.0.1:%s)", strings.TrimPrefix(u.Path, "/"), u.Port())
	if got := credstore.Describe(s); got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	if s.Name() != "postgres" {
		t.Errorf("Name = %q", s.Name())
	}
	if err := s.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func TestPostgresKeySize(t *testing.T) {
	_, err := credstore.NewPostgres(t.Context(), nil, make([]byte, 16), &credstore.PostgresOptions{KeyRef: keyRef})
	if err == nil || !strings.Contains(err.Error(), "settings.store.key ("+keyRef+") must be 32 bytes, not 16") {
		t.Errorf("NewPostgres with a 16-byte key = %v", err)
	}
}
