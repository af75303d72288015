package catalog

import (
	"context"
	"database/sql"
	"time"
)

// Failure is the last failure of a server that could not be used: it could
// not be started or reached, or it refused authorization. It is kept in the
// catalog so that every process sharing the file knows what the last one
// to try learned: a CLI's status shows a failure that serve met, and the
// other way round.
type Failure struct {
	Server string
	Hash   string // of the definition that failed, like Entry.Hash
	Class  string // the class of the error, such as "auth" or "start"
	Error  string // the error; it never holds a secret value
	At     time.Time
}

// PutFailure records f as its server's last failure, unless a later one is
// recorded already.
func (c *Catalog) PutFailure(ctx context.Context, f Failure) (err error) {
	defer wrapf(&err, "recording the failure of %q in the catalog", f.Server)
	return c.writeTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, c.d.q(`INSERT INTO failures (server, hash, class, error, at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (server) DO UPDATE SET hash = excluded.hash, class = excluded.class, error = excluded.error, at = excluded.at
			WHERE excluded.at >= failures.at`),
			f.Server, f.Hash, f.Class, f.Error, f.At.UnixMicro())
		return err
	})
}

// ClearFailure forgets the failure of server that happened before t: the
// server answered at t.
func (c *Catalog) ClearFailure(ctx context.Context, server string, t time.Time) (err error) {
	defer wrapf(&err, "clearing the failure of %q in the catalog", server)
	return c.writeTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, c.d.q(`DELETE FROM failures WHERE server = ? AND at <= ?`), server, t.UnixMicro())
		return err
	})
}

// Failures returns the recorded failures by server. A failure recorded
// under another hash than the server's current one is stale: callers
// compare.
func (c *Catalog) Failures(ctx context.Context) (_ map[string]Failure, err error) {
	defer wrapf(&err, "reading failures from the catalog")
	rows, err := c.db.QueryContext(ctx, c.d.q(`SELECT server, hash, class, error, at FROM failures`))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]Failure{}
	for rows.Next() {
		var f Failure
		var at int64
		if err := rows.Scan(&f.Server, &f.Hash, &f.Class, &f.Error, &at); err != nil {
			return nil, err
		}
		f.At = time.UnixMicro(at)
		out[f.Server] = f
	}
	return out, rows.Err()
}

// pruneFailures removes the failures of servers not in current, or recorded
// under another hash than current's.
func (c *Catalog) pruneFailures(ctx context.Context, tx *sql.Tx, current map[string]string) error {
	rows, err := tx.QueryContext(ctx, c.d.q("SELECT server, hash FROM failures"))
	if err != nil {
		return err
	}
	var stale []string
	for rows.Next() {
		var server, hash string
		if err := rows.Scan(&server, &hash); err != nil {
			rows.Close()
			return err
		}
		if h, ok := current[server]; !ok || h != hash {
			stale = append(stale, server)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, server := range stale {
		if _, err := tx.ExecContext(ctx, c.d.q("DELETE FROM failures WHERE server = ?"), server); err != nil {
			return err
		}
	}
	return nil
}
