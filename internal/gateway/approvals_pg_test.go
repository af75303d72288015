package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
)

// TestSharedApprovalsRefuseForgeries: the approvals two replicas share are
// signed with a key derived from the store's: a row that something
// without the key wrote is neither listed nor decidable, and a decision it
// wrote into a real row is not taken (the call keeps waiting); the team's
// own decision is taken once, and a second one finds nothing to decide.
func TestSharedApprovalsRefuseForgeries(t *testing.T) {
	db := pgtest.DB(t)
	key := []byte(strings.Repeat("k", 32))
	a, err := openSharedApprovals(t.Context(), db, key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := openSharedApprovals(t.Context(), db, key) // another replica
	if err != nil {
		t.Fatal(err)
	}
	other, err := openSharedApprovals(t.Context(), db, []byte(strings.Repeat("x", 32))) // not the team's key
	if err != nil {
		t.Fatal(err)
	}
	expires := time.Now().Add(time.Hour)
	real := &PendingApproval{ID: a.newID(), Server: "s", Tool: "t", Requester: "beta", Approvers: []string{"admins"}, Since: time.Now()}
	if err := a.add(t.Context(), real, expires); err != nil {
		t.Fatal(err)
	}
	forged := &PendingApproval{ID: other.newID(), Server: "s", Tool: "t", Requester: "mallory", Approvers: []string{"admins"}, Since: time.Now()}
	if err := other.add(t.Context(), forged, expires); err != nil {
		t.Fatal(err)
	}
	listed, err := b.list(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 1 || listed[0].ID != real.ID || listed[0].Requester != "beta" {
		t.Fatalf("listed %+v, want the team's one row", listed)
	}
	yes := func(*PendingApproval) error { return nil }
	if err := b.decide(t.Context(), forged.ID, "alpha", true, yes); !errors.Is(err, ErrNoApproval) {
		t.Errorf("deciding a forged row: %v, want ErrNoApproval", err)
	}

	// A decision written without the key: the waiting replica does not
	// take it.
	if err := other.decide(t.Context(), real.ID, "mallory", true, yes); !errors.Is(err, ErrNoApproval) {
		t.Errorf("a replica without the key decided: %v", err)
	}
	if _, err := db.ExecContext(t.Context(), `UPDATE switchboard_approvals SET decision = 'allow', decided_by = 'mallory', decision_mac = 'forged' WHERE id = $1`, real.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, wasForged, err := a.decision(t.Context(), real.ID); ok || !wasForged || err != nil {
		t.Errorf("a forged decision: ok %v, forged %v, err %v; want not taken, seen as forged", ok, wasForged, err)
	}
	if _, err := db.ExecContext(t.Context(), `UPDATE switchboard_approvals SET decision = '', decided_by = '', decision_mac = '' WHERE id = $1`, real.ID); err != nil {
		t.Fatal(err)
	}

	if err := b.decide(t.Context(), real.ID, "alpha", false, yes); err != nil {
		t.Fatal(err)
	}
	allow, by, ok, wasForged, err := a.decision(t.Context(), real.ID)
	if err != nil || !ok || wasForged || allow || by != "alpha" {
		t.Errorf("the team's deny: allow %v by %q ok %v forged %v err %v", allow, by, ok, wasForged, err)
	}
	if err := b.decide(t.Context(), real.ID, "alpha", true, yes); !errors.Is(err, ErrNoApproval) {
		t.Errorf("deciding twice: %v, want ErrNoApproval", err)
	}
	if listed, _ := b.list(t.Context()); len(listed) != 0 {
		t.Errorf("a decided row is still listed: %+v", listed)
	}

	// A row whose call gave up is gone; one past its expiry is not listed.
	a.remove(real.ID)
	late := &PendingApproval{ID: a.newID(), Approvers: []string{"admins"}}
	if err := a.add(context.Background(), late, time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if listed, _ := b.list(t.Context()); len(listed) != 0 {
		t.Errorf("an expired row is listed: %+v", listed)
	}
}
