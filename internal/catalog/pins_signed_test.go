package catalog

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// testStoreKey is the store key of the catalogs these tests open in
// PostgreSQL.
var testStoreKey = []byte("a store key of thirty-two bytes!")

// TestPinsSignedInStore: in the shared store, a pin that something without
// the store's key wrote, or changed, is refused when read, by every way in
// (Pins, UpdatePins, Accept): a replica acts on no pin that no replica
// wrote. Pins written before pins were signed are signed once, as they
// stand, by the first replica that opens the catalog with the key.
func TestPinsSignedInStore(t *testing.T) {
	ctx := context.Background()
	db := pgtest.DB(t)
	// An older release's catalog: version 1, pins without a MAC column.
	if err := pgstore.Migrate(ctx, db, "catalog", pgSchema()[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, toPostgres(`INSERT INTO pins (server, tool, hash, def, first_seen, pending, pending_def, pending_at)
		VALUES ('s', 'old', 'h1', '{}', 1, '', '', 0)`)); err != nil {
		t.Fatal(err)
	}
	c, err := OpenPostgres(ctx, db, testStoreKey)
	if err != nil {
		t.Fatal(err)
	}
	pins, err := c.Pins(ctx, "s")
	if err != nil || pins["old"].Hash != "h1" {
		t.Fatalf("a pin from before signing, after the upgrade: %+v, %v; want it read", pins, err)
	}
	now := time.UnixMilli(time.Now().UnixMilli())
	if err := c.SetPins(ctx, []Pin{{Server: "s", Tool: "t", Hash: "h2", Def: `{"name":"t"}`, FirstSeen: now, Pending: "h3", PendingDef: `{"name":"t","x":1}`, PendingAt: now}}); err != nil {
		t.Fatal(err)
	}
	if pins, err := c.Pins(ctx, "s"); err != nil || pins["t"].Pending != "h3" {
		t.Fatalf("a pin the catalog signed: %+v, %v", pins, err)
	}
	// A second replica with the key reads them; the adoption ran once.
	other, err := OpenPostgres(ctx, db, testStoreKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Pins(ctx, "s"); err != nil {
		t.Fatalf("another replica with the key: %v", err)
	}

	for _, tc := range []struct{ name, sql string }{
		{"accepted behind the store's back", `UPDATE pins SET hash = pending, def = pending_def WHERE tool = 't'`},
		{"a pin inserted without a MAC", `INSERT INTO pins (server, tool, hash, def, first_seen, pending, pending_def, pending_at) VALUES ('s', 'evil', 'h', '{}', 1, '', '', 0)`},
		{"a MAC copied from another pin", `INSERT INTO pins (server, tool, hash, def, first_seen, pending, pending_def, pending_at, mac) SELECT 's', 'copy', hash, def, first_seen, pending, pending_def, pending_at, mac FROM pins WHERE tool = 't'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if _, err := tx.ExecContext(ctx, toPostgres(tc.sql)); err != nil {
				t.Fatal(err)
			}
			// Read through the transaction: the forged row is seen as a
			// replica would see it, and goes with the rollback.
			rows, err := tx.QueryContext(ctx, toPostgres(`SELECT `+c.pinColumns()+` FROM pins WHERE server = 's'`))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.scanPins(rows, func(Pin) {}); !errors.Is(err, ErrPinForged) {
				t.Errorf("reading the pins: %v, want ErrPinForged", err)
			}
		})
	}
	// Through the catalog's own methods, committed.
	if _, err := db.ExecContext(ctx, toPostgres(`UPDATE pins SET hash = pending, def = pending_def, pending = '' WHERE tool = 't'`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Pins(ctx, "s"); !errors.Is(err, ErrPinForged) {
		t.Errorf("Pins: %v, want ErrPinForged", err)
	}
	if err := c.UpdatePins(ctx, "s", func(map[string]Pin) []Pin { return nil }); !errors.Is(err, ErrPinForged) {
		t.Errorf("UpdatePins: %v, want ErrPinForged", err)
	}
	if _, err := c.Accept(ctx, "s", "t", "h3"); !errors.Is(err, ErrPinForged) && !errors.Is(err, ErrNotPending) {
		t.Errorf("Accept: %v, want ErrPinForged", err)
	}
	// A replica with another key trusts none of them.
	stranger, err := OpenPostgres(ctx, db, []byte("another key of thirty-two bytes!"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stranger.Pins(ctx, "s"); !errors.Is(err, ErrPinForged) {
		t.Errorf("Pins with another key: %v, want ErrPinForged", err)
	}
}
