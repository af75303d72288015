package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
)

// pinsTable (version 4) holds tool pinning (docs/policy.md): per server and
// tool, the definition the user accepted and, while the server offers
// another, that one, pending; and per server, the row of tool "" (see
// FirstListing). It is state, not cache: Put, Remove and Prune of a
// server's entry leave it alone, and writing it does not bump the
// generation (search does not read it). A catalog file's pins move to the
// pins file in the state directory (see OpenPinFile); the table stays for
// the catalog in PostgreSQL, which holds the pins of replicas.
const pinsTable = `CREATE TABLE pins (
		server      TEXT NOT NULL,
		tool        TEXT NOT NULL, -- "" for the mark of the server's first listing
		hash        TEXT NOT NULL, -- of the accepted definition; "" for none (a new tool under pin "strict")
		def         TEXT NOT NULL, -- the accepted definition, canonical JSON
		first_seen  INTEGER NOT NULL, -- Unix milliseconds
		pending     TEXT NOT NULL, -- hash of a changed definition waiting for approval; "" for none
		pending_def TEXT NOT NULL,
		pending_at  INTEGER NOT NULL,
		PRIMARY KEY (server, tool)
	) STRICT`

// FirstListing is the name of the pin that marks a server's first listing
// as recorded, even a listing with no tools; its FirstSeen is when. No tool
// has this name: a server's tools without a name are dropped as they are
// listed (package upstream).
const FirstListing = ""

// Pin is the pinned definition of one tool of one server.
type Pin struct {
	Server, Tool string
	// Hash and Def are the accepted definition (Def canonical JSON); both
	// empty for a tool that was never accepted.
	Hash      string
	Def       string
	FirstSeen time.Time
	// Pending, PendingDef and PendingAt are a different definition the
	// server offers, waiting for approval; Pending is "" when there is none.
	Pending    string
	PendingDef string
	PendingAt  time.Time
}

// Pins returns the pins of a server's tools, by tool name.
func (c *Catalog) Pins(ctx context.Context, server string) (_ map[string]Pin, err error) {
	defer wrapf(&err, "reading the pins of %q", server)
	return c.pins(ctx, c.db, server)
}

// UpdatePins reads a server's pins and writes the pins update returns, in
// one transaction: two processes that reconcile the same server at once
// take turns, and the second sees what the first wrote.
func (c *Catalog) UpdatePins(ctx context.Context, server string, update func(map[string]Pin) []Pin) (err error) {
	defer wrapf(&err, "updating the pins of %q", server)
	return c.writeTx(ctx, func(tx *sql.Tx) error {
		stored, err := c.pins(ctx, tx, server)
		if err != nil {
			return err
		}
		return setPins(ctx, tx, c.d, update(stored), c.pinKey)
	})
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (c *Catalog) pins(ctx context.Context, db querier, server string) (map[string]Pin, error) {
	rows, err := db.QueryContext(ctx, c.d.q(`SELECT `+c.pinColumns()+` FROM pins WHERE server = ?`), server)
	if err != nil {
		return nil, err
	}
	out := map[string]Pin{}
	err = c.scanPins(rows, func(p Pin) { out[p.Tool] = p })
	return out, err
}

// allPins returns every pin, of every server.
func (c *Catalog) allPins(ctx context.Context) ([]Pin, error) {
	rows, err := c.db.QueryContext(ctx, c.d.q(`SELECT `+c.pinColumns()+` FROM pins`))
	if err != nil {
		return nil, err
	}
	var out []Pin
	err = c.scanPins(rows, func(p Pin) { out = append(out, p) })
	return out, err
}

// pinColumns are the columns of a pin row that scanPins reads: its MAC
// too when the catalog signs its pins.
func (c *Catalog) pinColumns() string {
	if c.pinKey != nil {
		return "server, tool, hash, def, first_seen, pending, pending_def, pending_at, mac"
	}
	return "server, tool, hash, def, first_seen, pending, pending_def, pending_at"
}

// scanPins reads the pins rows holds, and closes it. In a catalog that
// signs its pins, a row whose MAC does not verify fails the read
// (ErrPinForged): a reader acts on no pin the store's key did not sign.
func (c *Catalog) scanPins(rows *sql.Rows, f func(Pin)) error {
	defer rows.Close()
	for rows.Next() {
		var p Pin
		var first, at int64
		dest := []any{&p.Server, &p.Tool, &p.Hash, &p.Def, &first, &p.Pending, &p.PendingDef, &at}
		var mac string
		if c.pinKey != nil {
			dest = append(dest, &mac)
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		p.FirstSeen, p.PendingAt = time.UnixMilli(first), time.UnixMilli(at)
		if c.pinKey != nil && !pgstore.ValidMAC(c.pinKey, mac, pinFields(p)...) {
			tool := fmt.Sprintf("tool %q", p.Tool)
			if p.Tool == FirstListing {
				tool = "first listing"
			}
			return fmt.Errorf("%w: the pin of the %s on %q", ErrPinForged, tool, p.Server)
		}
		f(p)
	}
	return rows.Err()
}

// ErrPinForged is matched by the error of reading a pin, in a catalog in
// the shared store, that the store's key did not sign: something that can
// write to the database, but does not hold settings.store.key, wrote or
// changed it.
var ErrPinForged = errors.New("a pin in the shared store is not signed with the store's key (settings.store.key), so no replica wrote it: the server's tools stay quarantined until it is removed (hint: delete the server's rows from the pins table, then approve its tools again)")

// pinFields are what a pin's MAC covers: every column but the MAC.
func pinFields(p Pin) []string {
	return []string{"pin", p.Server, p.Tool, p.Hash, p.Def, strconv.FormatInt(p.FirstSeen.UnixMilli(), 10),
		p.Pending, p.PendingDef, strconv.FormatInt(p.PendingAt.UnixMilli(), 10)}
}

// SetPins writes pins, replacing those of the same server and tool.
func (c *Catalog) SetPins(ctx context.Context, pins []Pin) (err error) {
	if len(pins) == 0 {
		return nil
	}
	defer wrapf(&err, "writing pins")
	return c.writeTx(ctx, func(tx *sql.Tx) error { return setPins(ctx, tx, c.d, pins, c.pinKey) })
}

// setPins writes pins in tx, in the database of dialect d, each signed
// with key if it is not nil.
func setPins(ctx context.Context, tx *sql.Tx, d *dialect, pins []Pin, key []byte) error {
	if len(pins) == 0 {
		return nil
	}
	cols, vals, mac := "", "", ""
	if key != nil {
		cols, vals, mac = ", mac", ", ?", ", mac = excluded.mac"
	}
	stmt, err := tx.PrepareContext(ctx, d.q(`INSERT INTO pins (server, tool, hash, def, first_seen, pending, pending_def, pending_at`+cols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?`+vals+`)
		ON CONFLICT (server, tool) DO UPDATE SET hash = excluded.hash, def = excluded.def, first_seen = excluded.first_seen,
			pending = excluded.pending, pending_def = excluded.pending_def, pending_at = excluded.pending_at`+mac))
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, p := range pins {
		args := []any{p.Server, p.Tool, p.Hash, p.Def, p.FirstSeen.UnixMilli(), p.Pending, p.PendingDef, p.PendingAt.UnixMilli()}
		if key != nil {
			args = append(args, pgstore.MAC(key, pinFields(p)...))
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// ErrNotPending is matched by the error of Accept for a tool that has no
// definition waiting for approval.
var ErrNotPending = errors.New("no changed definition is waiting for approval")

// Accept makes a tool's pending definition the accepted one, if its hash
// is still pending (the definition the user was shown), and returns the
// pin as it was before.
func (c *Catalog) Accept(ctx context.Context, server, tool, pending string) (_ Pin, err error) {
	defer wrapf(&err, "accepting %q of %q", tool, server)
	var was Pin
	err = c.writeTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, c.d.q(`SELECT `+c.pinColumns()+` FROM pins WHERE server = ? AND tool = ?`), server, tool)
		if err != nil {
			return err
		}
		var p Pin
		found := false
		if err := c.scanPins(rows, func(q Pin) { p, found = q, true }); err != nil {
			return err
		}
		if !found || p.Pending == "" {
			return ErrNotPending
		}
		if p.Pending != pending {
			return fmt.Errorf("the server changed the definition again since it was shown: look at it again (describe), then approve")
		}
		accepted := p
		accepted.Hash, accepted.Def = p.Pending, p.PendingDef
		accepted.Pending, accepted.PendingDef, accepted.PendingAt = "", "", time.UnixMilli(0)
		if err := setPins(ctx, tx, c.d, []Pin{accepted}, c.pinKey); err != nil {
			return err
		}
		was = p
		return nil
	})
	if err != nil {
		return Pin{}, err
	}
	return was, nil
}
