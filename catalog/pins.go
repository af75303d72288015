package catalog

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
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
		return setPins(ctx, tx, c.d, update(stored))
	})
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (c *Catalog) pins(ctx context.Context, db querier, server string) (map[string]Pin, error) {
	rows, err := db.QueryContext(ctx, c.d.q(`SELECT server, tool, hash, def, first_seen, pending, pending_def, pending_at FROM pins WHERE server = ?`), server)
	if err != nil {
		return nil, err
	}
	out := map[string]Pin{}
	err = scanPins(rows, func(p Pin) { out[p.Tool] = p })
	return out, err
}

// allPins returns every pin, of every server.
func (c *Catalog) allPins(ctx context.Context) ([]Pin, error) {
	rows, err := c.db.QueryContext(ctx, c.d.q(`SELECT server, tool, hash, def, first_seen, pending, pending_def, pending_at FROM pins`))
	if err != nil {
		return nil, err
	}
	var out []Pin
	err = scanPins(rows, func(p Pin) { out = append(out, p) })
	return out, err
}

// scanPins reads the pins rows holds, and closes it.
func scanPins(rows *sql.Rows, f func(Pin)) error {
	defer rows.Close()
	for rows.Next() {
		var p Pin
		var first, at int64
		if err := rows.Scan(&p.Server, &p.Tool, &p.Hash, &p.Def, &first, &p.Pending, &p.PendingDef, &at); err != nil {
			return err
		}
		p.FirstSeen, p.PendingAt = time.UnixMilli(first), time.UnixMilli(at)
		f(p)
	}
	return rows.Err()
}

// SetPins writes pins, replacing those of the same server and tool.
func (c *Catalog) SetPins(ctx context.Context, pins []Pin) (err error) {
	if len(pins) == 0 {
		return nil
	}
	defer wrapf(&err, "writing pins")
	return c.writeTx(ctx, func(tx *sql.Tx) error { return setPins(ctx, tx, c.d, pins) })
}

// setPins writes pins in tx, in the database of dialect d.
func setPins(ctx context.Context, tx *sql.Tx, d *dialect, pins []Pin) error {
	if len(pins) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, d.q(`INSERT INTO pins (server, tool, hash, def, first_seen, pending, pending_def, pending_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (server, tool) DO UPDATE SET hash = excluded.hash, def = excluded.def, first_seen = excluded.first_seen,
			pending = excluded.pending, pending_def = excluded.pending_def, pending_at = excluded.pending_at`))
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, p := range pins {
		if _, err := stmt.ExecContext(ctx, p.Server, p.Tool, p.Hash, p.Def, p.FirstSeen.UnixMilli(), p.Pending, p.PendingDef, p.PendingAt.UnixMilli()); err != nil {
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
		p := Pin{Server: server, Tool: tool}
		var first, at int64
		err := tx.QueryRowContext(ctx, c.d.q(`SELECT hash, def, first_seen, pending, pending_def, pending_at FROM pins WHERE server = ? AND tool = ?`), server, tool).
			Scan(&p.Hash, &p.Def, &first, &p.Pending, &p.PendingDef, &at)
		if errors.Is(err, sql.ErrNoRows) || err == nil && p.Pending == "" {
			return ErrNotPending
		}
		if err != nil {
			return err
		}
		p.FirstSeen, p.PendingAt = time.UnixMilli(first), time.UnixMilli(at)
		if p.Pending != pending {
			return fmt.Errorf("the server changed the definition again since it was shown: look at it again (describe), then approve")
		}
		if _, err := tx.ExecContext(ctx, c.d.q(`UPDATE pins SET hash = pending, def = pending_def, pending = '', pending_def = '', pending_at = 0
			WHERE server = ? AND tool = ?`), server, tool); err != nil {
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
