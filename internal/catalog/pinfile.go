package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// PinFile is a file of tool pins (docs/policy.md) of its own, for one
// machine: the table of the catalog's pins, in the state directory rather
// than the cache. A cleaner that empties the cache, the catalog with it,
// does not make Switchboard forget which definitions the user accepted.
// (Replicas keep their pins in the catalog in PostgreSQL, which is not a
// cache.) Its methods are those of the catalog's pins, and safe for
// concurrent use, by several processes too.
type PinFile struct {
	c *Catalog
}

// pinFileVersion is the pins file's schema version (PRAGMA user_version).
// A later change adds a migration: the file is state, never rebuilt.
const pinFileVersion = 1

// OpenPinFile opens the pins file at path, creating it (but not its
// directory) if needed. A new file starts with the pins of from, the
// catalog file that held them before there was a pins file (nil: none),
// which are then removed from it: they are moved once.
func OpenPinFile(path string, from *Catalog) (*PinFile, error) {
	return openPinFile(path, from, busyTimeout)
}

func openPinFile(path string, from *Catalog, busy time.Duration) (*PinFile, error) {
	moved := false
	fs := &fileSchema{
		version: pinFileVersion, create: []string{pinsTable}, tables: []string{"pins"},
		newer: "upgrade switchboard (the file holds the tool definitions you accepted: keep it)",
	}
	if from != nil && from.schema != nil {
		fs.created = func(ctx context.Context, tx *sql.Tx) error {
			pins, err := from.allPins(ctx)
			if err != nil {
				return fmt.Errorf("moving the pins of the catalog %s: %w", from.path, err)
			}
			moved = len(pins) > 0
			return setPins(ctx, tx, sqliteDialect, pins, nil)
		}
	}
	c, err := openFile(path, busy, fs)
	if err != nil {
		return nil, fmt.Errorf("opening the pins file %s: %w", path, err)
	}
	if moved {
		// The catalog's copy is read no more. Removed, it cannot fill a
		// pins file created later (after this one is deleted) with pins
		// older than those this one held. Should the removal fail, the
		// copy stays unread: this file exists now.
		ctx, cancel := context.WithTimeout(context.Background(), busy)
		defer cancel()
		_ = from.writeTx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, "DELETE FROM pins")
			return err
		})
	}
	return &PinFile{c: c}, nil
}

// Path returns the file the pins were opened from.
func (f *PinFile) Path() string { return f.c.path }

// Close closes the file. It is idempotent and safe to call concurrently.
func (f *PinFile) Close() error { return f.c.Close() }

// Pins returns the pins of a server's tools, by tool name (see
// Catalog.Pins).
func (f *PinFile) Pins(ctx context.Context, server string) (map[string]Pin, error) {
	return f.c.Pins(ctx, server)
}

// UpdatePins reads a server's pins and writes the pins update returns, in
// one transaction (see Catalog.UpdatePins).
func (f *PinFile) UpdatePins(ctx context.Context, server string, update func(map[string]Pin) []Pin) error {
	return f.c.UpdatePins(ctx, server, update)
}

// Accept makes a tool's pending definition the accepted one (see
// Catalog.Accept).
func (f *PinFile) Accept(ctx context.Context, server, tool, pending string) (Pin, error) {
	return f.c.Accept(ctx, server, tool, pending)
}

// SetPins writes pins, replacing those of the same server and tool.
func (f *PinFile) SetPins(ctx context.Context, pins []Pin) error { return f.c.SetPins(ctx, pins) }
