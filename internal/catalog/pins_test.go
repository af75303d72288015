package catalog

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPins: pins are written, read back, left alone by Put, Remove and
// Prune of the server's entry, and Accept takes the pending definition
// only while it is the one shown.
func TestPins(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c, _ := b.openTemp(t)
		at := time.UnixMilli(1_700_000_000_000)
		p := Pin{Server: "s", Tool: "t", Hash: "h1", Def: `{"name":"t"}`, FirstSeen: at, Pending: "h2", PendingDef: `{"name":"t","description":"x"}`, PendingAt: at}
		if err := c.UpdatePins(ctx, "s", func(stored map[string]Pin) []Pin {
			if len(stored) != 0 {
				t.Errorf("stored %v, want none", stored)
			}
			return []Pin{p}
		}); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(ctx, &Entry{Server: "s", Hash: "x"}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Prune(ctx, map[string]string{"s": "other"}); err != nil {
			t.Fatal(err)
		}
		got, err := c.Pins(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]Pin{"t": p}, got); diff != "" {
			t.Errorf("pins (-want +got):\n%s", diff)
		}
		if _, err := c.Accept(ctx, "s", "t", "h3"); err == nil {
			t.Errorf("accepting a definition that is no longer pending succeeded")
		}
		before, err := c.Accept(ctx, "s", "t", "h2")
		if err != nil || before.Pending != "h2" {
			t.Fatalf("Accept = %+v, %v", before, err)
		}
		got, _ = c.Pins(ctx, "s")
		if a := got["t"]; a.Hash != "h2" || a.Def != p.PendingDef || a.Pending != "" || !a.FirstSeen.Equal(at) {
			t.Errorf("after Accept: %+v", a)
		}
		if _, err := c.Accept(ctx, "s", "t", "h2"); !errors.Is(err, ErrNotPending) {
			t.Errorf("accepting twice: %v, want ErrNotPending", err)
		}
	})
}

// TestMigrateFromVersion3: a version 3 file gains the pins table and keeps
// its entries.
func TestMigrateFromVersion3(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range schema {
		if s == pinsTable {
			continue
		}
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{`INSERT INTO servers VALUES ('kept', 'h', '', '{}', 0)`, `PRAGMA user_version = 3`} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, ok, err := c.Get(context.Background(), "kept", "h"); err != nil || !ok {
		t.Fatalf("after migrating: Get = %v, %v; want the stored entry", ok, err)
	}
	if err := c.SetPins(context.Background(), []Pin{{Server: "kept", Tool: "t", Hash: "h"}}); err != nil {
		t.Errorf("after migrating: %v", err)
	}
}
