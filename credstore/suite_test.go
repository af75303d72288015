package credstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/credstore"
)

// The one suite every Store passes: Get, Set, Delete, Keys and Lock mean
// the same in each. TestFileStore, TestPostgresStore and
// TestKeychainStore run it.

func TestFileStore(t *testing.T) {
	storeSuite(t, func(t *testing.T) credstore.Store {
		return credstore.NewFile(filepath.Join(t.TempDir(), "creds"))
	})
}

func TestPostgresStore(t *testing.T) {
	storeSuite(t, func(t *testing.T) credstore.Store { return newPostgres(t, pgDB(t), testKey(1)) })
}

func TestKeychainStore(t *testing.T) {
	storeSuite(t, func(t *testing.T) credstore.Store {
		return credstore.NewKeychain(keychainService(t), filepath.Join(t.TempDir(), "keychain"))
	})
}

func storeSuite(t *testing.T, open func(t *testing.T) credstore.Store) {
	t.Run("RoundTrip", func(t *testing.T) {
		s := open(t)
		if v, ok, err := s.Get("secret/a"); ok || err != nil || v != nil {
			t.Fatalf("Get of a missing key = %q, %v, %v; want nothing", v, ok, err)
		}
		const multi = "a value with spaces\nand a second line, and unicode: é✓"
		for key, v := range map[string]string{"secret/a": "one", "secret/b": multi, "oauth/gh/token": `{"access_token":"x"}`} {
			if err := s.Set(key, []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
		if v, ok, err := s.Get("secret/b"); string(v) != multi || !ok || err != nil {
			t.Errorf("Get = %q, %v, %v; want the value set", v, ok, err)
		}
		if err := s.Set("secret/a", []byte("uno")); err != nil {
			t.Fatal(err)
		}
		if v, ok, err := s.Get("secret/a"); string(v) != "uno" || !ok || err != nil {
			t.Errorf("Get after a second Set = %q, %v, %v; want the new value", v, ok, err)
		}
		if keys, err := s.Keys("secret/"); err != nil || !slices.Equal(keys, []string{"secret/a", "secret/b"}) {
			t.Errorf("Keys(secret/) = %v, %v", keys, err)
		}
		if keys, err := s.Keys("nothing/"); err != nil || len(keys) != 0 {
			t.Errorf("Keys(nothing/) = %v, %v; want none", keys, err)
		}
		if err := s.Delete("secret/a"); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete("secret/a"); err != nil {
			t.Errorf("deleting a missing key: %v", err)
		}
		if _, ok, err := s.Get("secret/a"); ok || err != nil {
			t.Errorf("Get after Delete = %v, %v; want nothing", ok, err)
		}
		if keys, err := s.Keys(""); err != nil || !slices.Equal(keys, []string{"oauth/gh/token", "secret/b"}) {
			t.Errorf("Keys after Delete = %v, %v", keys, err)
		}
	})

	t.Run("KeysSortedByByte", func(t *testing.T) {
		s := open(t)
		in := []string{"secret/b", "secret/B", "secret/a_", "secret/a", "secret/a/x", "secret/%", "secretX"}
		for _, k := range in {
			if err := s.Set(k, []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		want := []string{"secret/%", "secret/B", "secret/a", "secret/a/x", "secret/a_", "secret/b"}
		if keys, err := s.Keys("secret/"); err != nil || !slices.Equal(keys, want) {
			t.Errorf("Keys(secret/) = %v, %v; want %v (byte order, the prefix taken literally)", keys, err, want)
		}
		// A prefix is a prefix, not a pattern: % and _ match themselves.
		if keys, err := s.Keys("secret/a_"); err != nil || !slices.Equal(keys, []string{"secret/a_"}) {
			t.Errorf("Keys(secret/a_) = %v, %v", keys, err)
		}
		if keys, err := s.Keys("secret/%"); err != nil || !slices.Equal(keys, []string{"secret/%"}) {
			t.Errorf("Keys(secret/%%) = %v, %v", keys, err)
		}
	})

	t.Run("BadKeys", func(t *testing.T) {
		s := open(t)
		for _, key := range []string{"", "/abs", "a/", "a/../b", "has space", "nl\n", strings.Repeat("k", 151)} {
			if err := s.Set(key, []byte("v")); !errors.Is(err, credstore.ErrBadKey) {
				t.Errorf("Set(%q) = %v, want ErrBadKey", key, err)
			}
			if _, _, err := s.Get(key); !errors.Is(err, credstore.ErrBadKey) {
				t.Errorf("Get(%q) = %v, want ErrBadKey", key, err)
			}
			if err := s.Delete(key); !errors.Is(err, credstore.ErrBadKey) {
				t.Errorf("Delete(%q) = %v, want ErrBadKey", key, err)
			}
			if _, err := s.Lock(t.Context(), key); !errors.Is(err, credstore.ErrBadKey) {
				t.Errorf("Lock(%q) = %v, want ErrBadKey", key, err)
			}
		}
		if err := s.Set(strings.Repeat("k", 150), []byte("v")); err != nil {
			t.Errorf("Set of a 150-byte key: %v", err)
		}
	})

	t.Run("Lock", func(t *testing.T) {
		s := open(t)
		unlock, err := s.Lock(t.Context(), "oauth/x")
		if err != nil {
			t.Fatal(err)
		}
		waiter := make(chan error, 1)
		go func() {
			u, err := s.Lock(t.Context(), "oauth/x")
			if err == nil {
				u()
			}
			waiter <- err
		}()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := s.Lock(ctx, "oauth/x"); err == nil || !strings.Contains(err.Error(), "another process holds it") {
			t.Fatalf("Lock while held, with an ended context = %v; want it to give up, saying why", err)
		}
		other, err := s.Lock(t.Context(), "oauth/y") // another key is free
		if err != nil {
			t.Fatal(err)
		}
		other()
		unlock()
		if err := <-waiter; err != nil {
			t.Fatalf("the waiting Lock, once the holder let go: %v", err)
		}
		again, err := s.Lock(t.Context(), "oauth/x")
		if err != nil {
			t.Fatal(err)
		}
		again()
	})
}
