package gateway

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/pgstore"
)

// Replicas that share a store (Options.Store) share their pending
// approvals too: an approver's request reaches whichever replica the load
// balancer picks, and the call waits on the one its client reached. A
// pending approval is a row of switchboard_approvals; any replica lists
// them and writes a decision into one; the replica whose call waits reads
// it. The decision is the database's before the call goes on, so a replica
// that dies after deciding loses nothing.
//
// Every row, and every decision written into it, carries a MAC made with
// a key derived from the store's key (pgstore.MAC): something that can
// write to the database but lacks the key can neither list a call for
// approval nor approve one.

// approvalsComponent is the table's name in pgstore's schema versions.
const approvalsComponent = "approvals"

// approvalsPurpose names the board's key among those derived from the
// store's key.
const approvalsPurpose = "approvals"

var approvalSteps = []string{
	`CREATE TABLE switchboard_approvals (
		id           TEXT PRIMARY KEY,
		approval     TEXT NOT NULL,
		mac          TEXT NOT NULL,
		expires      TIMESTAMPTZ NOT NULL,
		decision     TEXT NOT NULL DEFAULT '',
		decided_by   TEXT NOT NULL DEFAULT '',
		decision_mac TEXT NOT NULL DEFAULT ''
	)`,
}

// pollDecision is how often a waiting call reads its row. A decision is a
// person's, made in seconds; a quarter of one more is nothing beside it,
// and a read holds no connection between reads, as listening would.
const pollDecision = 250 * time.Millisecond

// sharedApprovals is the board in a PostgreSQL store.
type sharedApprovals struct {
	db  *sql.DB
	key []byte // derived from the store's key for approvalsPurpose
}

func openSharedApprovals(ctx context.Context, db *sql.DB, storeKey []byte) (*sharedApprovals, error) {
	if err := pgstore.Migrate(ctx, db, approvalsComponent, approvalSteps); err != nil {
		return nil, fmt.Errorf("the approvals table in the shared store: %w", err)
	}
	return &sharedApprovals{db: db, key: pgstore.DeriveKey(storeKey, approvalsPurpose)}, nil
}

// newID returns an id no replica has given.
func (b *sharedApprovals) newID() string { return rand.Text() }

// add lists p until expires (or until removed). Rows long expired, of
// replicas that died waiting, go at the same time.
func (b *sharedApprovals) add(ctx context.Context, p *PendingApproval, expires time.Time) error {
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	exp := expires.UTC().Truncate(time.Microsecond)
	_, err = b.db.ExecContext(ctx, `INSERT INTO switchboard_approvals (id, approval, mac, expires) VALUES ($1, $2, $3, $4)`,
		p.ID, string(data), b.rowMAC(p.ID, string(data), exp), exp)
	if err != nil {
		return fmt.Errorf("listing the call for approval in the shared store: %w", err)
	}
	_, _ = b.db.ExecContext(ctx, `DELETE FROM switchboard_approvals WHERE expires < now() - interval '1 hour'`)
	return nil
}

func (b *sharedApprovals) rowMAC(id, data string, expires time.Time) string {
	return pgstore.MAC(b.key, "approval", id, data, strconv.FormatInt(expires.UnixMicro(), 10))
}

func (b *sharedApprovals) decisionMAC(id, decision, by string) string {
	return pgstore.MAC(b.key, "decision", id, decision, by)
}

// remove takes p's row away: its call no longer waits.
func (b *sharedApprovals) remove(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = b.db.ExecContext(ctx, `DELETE FROM switchboard_approvals WHERE id = $1`, id)
}

// list returns the calls waiting for a decision, every replica's, oldest
// first. A row whose MAC does not verify is left out.
func (b *sharedApprovals) list(ctx context.Context) ([]PendingApproval, error) {
	rows, err := b.db.QueryContext(ctx, `SELECT id, approval, mac, expires FROM switchboard_approvals
		WHERE decision = '' AND expires > now()`)
	if err != nil {
		return nil, fmt.Errorf("reading the pending approvals in the shared store: %w", err)
	}
	defer rows.Close()
	out := []PendingApproval{}
	for rows.Next() {
		var id, data, mac string
		var exp time.Time
		if err := rows.Scan(&id, &data, &mac, &exp); err != nil {
			return nil, err
		}
		var p PendingApproval
		if !pgstore.ValidMAC(b.key, mac, "approval", id, data, strconv.FormatInt(exp.UnixMicro(), 10)) || json.Unmarshal([]byte(data), &p) != nil || p.ID != id {
			continue
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b PendingApproval) int { return a.Since.Compare(b.Since) })
	return out, nil
}

// decide writes the decision on call id, which may decide checks first:
// once, while the call waits. ErrNoApproval when there is no such call.
func (b *sharedApprovals) decide(ctx context.Context, id, by string, allow bool, may func(*PendingApproval) error) error {
	var data, mac string
	var exp time.Time
	err := b.db.QueryRowContext(ctx, `SELECT approval, mac, expires FROM switchboard_approvals
		WHERE id = $1 AND decision = '' AND expires > now()`, id).Scan(&data, &mac, &exp)
	var p PendingApproval
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return noApproval(id)
	case err != nil:
		return fmt.Errorf("deciding approval %q: %w", id, err)
	case !pgstore.ValidMAC(b.key, mac, "approval", id, data, strconv.FormatInt(exp.UnixMicro(), 10)) || json.Unmarshal([]byte(data), &p) != nil:
		return noApproval(id) // not written by a replica of this team
	}
	if err := may(&p); err != nil {
		return err
	}
	decision := "deny"
	if allow {
		decision = "allow"
	}
	res, err := b.db.ExecContext(ctx, `UPDATE switchboard_approvals SET decision = $2, decided_by = $3, decision_mac = $4
		WHERE id = $1 AND decision = '' AND expires > now()`, id, decision, by, b.decisionMAC(id, decision, by))
	if err != nil {
		return fmt.Errorf("deciding approval %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return noApproval(id) // decided meanwhile, or expired
	}
	return nil
}

// decision reads the decision on call id: ok once one is written with a
// MAC that verifies. A decision without one is not the team's: forged is
// set, and the call keeps waiting.
func (b *sharedApprovals) decision(ctx context.Context, id string) (allow bool, by string, ok, forged bool, err error) {
	var decision, mac string
	err = b.db.QueryRowContext(ctx, `SELECT decision, decided_by, decision_mac FROM switchboard_approvals WHERE id = $1`, id).Scan(&decision, &by, &mac)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, "", false, false, nil
	case err != nil:
		return false, "", false, false, err
	case decision == "":
		return false, "", false, false, nil
	case !pgstore.ValidMAC(b.key, mac, "decision", id, decision, by) || decision != "allow" && decision != "deny":
		return false, "", false, true, nil
	}
	return decision == "allow", by, true, false, nil
}

func noApproval(id string) error {
	return fmt.Errorf("deciding approval %q: %w (it was decided, or its call gave up waiting; list them with switchboard approvals)", id, ErrNoApproval)
}
