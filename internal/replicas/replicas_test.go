package replicas

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestRegistry: a replica is found at the URL it registered while its
// record is fresh; a stale record (a replica killed outright) and a
// replica that closed are not found; one that registered no URL is never
// found, and still finds the others.
func TestRegistry(t *testing.T) {
	db := pgtest.DB(t)
	ctx := t.Context()
	a, err := Open(ctx, db, "a", "http://10.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, db, "b", "") // a replica others cannot reach
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
	c, err := Open(ctx, db, "c", "")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
}
