package catalog

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFailures(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c, _ := b.openTemp(t)
		t0 := time.UnixMicro(1_700_000_000_000_000)
		auth := Failure{Server: "api", Hash: "h1", Class: "auth", Error: `connecting "api": the server answered HTTP 401 Unauthorized`, At: t0}
		if err := c.PutFailure(ctx, auth); err != nil {
			t.Fatal(err)
		}
		// An older failure, recorded late by another process, does not replace it.
		if err := c.PutFailure(ctx, Failure{Server: "api", Hash: "h1", Class: "start", Error: "older", At: t0.Add(-time.Minute)}); err != nil {
			t.Fatal(err)
		}
		start := Failure{Server: "npx", Hash: "h2", Class: "start", Error: "exited with status 1", At: t0}
		if err := c.PutFailure(ctx, start); err != nil {
			t.Fatal(err)
		}
		want := map[string]Failure{"api": auth, "npx": start}
		got, err := c.Failures(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got, equalTime); d != "" {
			t.Errorf("Failures (-want +got):\n%s", d)
		}

		// A server that answered before a failure keeps it; after, it is cleared.
		if err := c.ClearFailure(ctx, "api", t0.Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		if got, _ := c.Failures(ctx); len(got) != 2 {
			t.Errorf("an answer before the failure cleared it: %v", got)
		}
		if err := c.ClearFailure(ctx, "api", t0.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		if got, _ := c.Failures(ctx); len(got) != 1 || got["npx"].Error != start.Error {
			t.Errorf("after api answered: %v, want npx's failure only", got)
		}

		// Prune removes the failures of servers gone or redefined.
		if err := c.PutFailure(ctx, auth); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Prune(ctx, map[string]string{"api": "h1", "npx": "changed"}); err != nil {
			t.Fatal(err)
		}
		if got, _ := c.Failures(ctx); len(got) != 1 || got["api"].Class != "auth" {
			t.Errorf("after pruning: %v, want api's failure only", got)
		}
	})
}

func TestMigrateFromVersion2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range schema {
		if s == failuresTable || s == pinsTable { // version 2 is the current schema without them
			continue
		}
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{`INSERT INTO servers VALUES ('kept', 'h', '', '{}', 0)`, `PRAGMA user_version = 2`} {
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
	f := Failure{Server: "kept", Hash: "h", Class: "auth", Error: "401", At: time.UnixMilli(1)}
	if err := c.PutFailure(context.Background(), f); err != nil {
		t.Fatalf("after migrating: %v", err)
	}
}
