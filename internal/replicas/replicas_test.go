package replicas

import (
	"errors"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

var testKey = []byte("a store key of thirty-two bytes!")

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestRegistry: a replica is found at the URL it registered while its
// record is fresh; a stale record (a replica killed outright) and a
// replica that closed are not found; one that registered no URL is never
// found, and still finds the others.
func TestRegistry(t *testing.T) {
	db := pgtest.DB(t)
	ctx := t.Context()
	a, err := Open(ctx, db, "a", "http://10.0.0.1:8080", testKey)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, db, "b", "", testKey) // a replica others cannot reach
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if url, ok, err := b.Lookup(ctx, "a"); err != nil || !ok || url != "http://10.0.0.1:8080" {
		t.Errorf("Lookup(a) = %q, %v, %v; want its URL", url, ok, err)
	}
	if _, ok, err := a.Lookup(ctx, "b"); err != nil || ok {
		t.Errorf("Lookup(b) = %v, %v; want not found: it registered no URL", ok, err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE switchboard_replicas SET last_seen = now() - interval '31 seconds' WHERE id = 'a'`); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := b.Lookup(ctx, "a"); err != nil || ok {
		t.Errorf("Lookup(a) with a stale record = %v, %v; want not found", ok, err)
	}
	if err := a.renew(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := b.Lookup(ctx, "a"); !ok {
		t.Error("Lookup(a) after a renewal: not found")
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := b.Lookup(ctx, "a"); err != nil || ok {
		t.Errorf("Lookup(a) after Close = %v, %v; want not found", ok, err)
	}
	// A second replica migrates nothing again.
	c, err := Open(ctx, db, "c", "", testKey)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// TestForgedRecord: a record written by something that can write to the
// database but lacks the store's key (or altered by it: another URL, a
// MAC copied from another record) is not followed; Lookup says why.
func TestForgedRecord(t *testing.T) {
	db := pgtest.DB(t)
	ctx := t.Context()
	a, err := Open(ctx, db, "a", "http://10.0.0.1:8080", testKey)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, db, "b", "http://10.0.0.2:8080", testKey)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, tc := range []struct {
		name, id, sql string
	}{
		{"no mac", "x", `INSERT INTO switchboard_replicas (id, url) VALUES ('x', 'http://attacker.example:80')`},
		{"url changed", "a", `UPDATE switchboard_replicas SET url = 'http://attacker.example:80' WHERE id = 'a'`},
		{"mac of another record", "y", `INSERT INTO switchboard_replicas (id, url, mac) SELECT 'y', url, mac FROM switchboard_replicas WHERE id = 'b'`},
	} {
		if _, err := db.ExecContext(ctx, tc.sql); err != nil {
			t.Fatal(err)
		}
		url, ok, err := b.Lookup(ctx, tc.id)
		if ok || url != "" || !errors.Is(err, ErrForged) {
			t.Errorf("%s: Lookup(%s) = %q, %v, %v; want nothing, and ErrForged", tc.name, tc.id, url, ok, err)
		}
	}
	// A replica with another key cannot read this team's records either.
	other, err := Open(ctx, db, "o", "", []byte("another key of thirty-two bytes!"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, ok, err := other.Lookup(ctx, "b"); ok || !errors.Is(err, ErrForged) {
		t.Errorf("Lookup(b) with another key = %v, %v; want ErrForged", ok, err)
	}
	if _, err := Open(ctx, db, "n", "", nil); err == nil {
		t.Error("Open without a key succeeded")
	}
}
