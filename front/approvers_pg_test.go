package front

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/idptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/policy"
)

// TestApprovalsAcrossReplicas: two replicas share a store and a provider,
// as behind one load balancer. Beta's call waits on replica 1 for an
// approver; alpha, an approver whose requests reach replica 2, sees it
// there and allows it, and the call on replica 1 goes on; a deny made on
// replica 2 refuses the next. The shared audit trail names both people for
// each decision.
func TestApprovalsAcrossReplicas(t *testing.T) {
	dsn := pgtest.DSN(t)
	const audience = "https://team.example/mcp"
	idp := idptest.Start(t, audience)
	key := []byte(strings.Repeat("k", 32))
	var reps []*identityGateway
	for range 2 {
		db, err := pgstore.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		b := fixture()
		b["approve"] = map[string]any{"when": "always", "approvers": []string{"admins"}}
		o := identityOpts{servers: map[string]def{"b": b}, idp: idp, audience: audience}
		o.engine.Store, o.engine.StoreKey = db, key
		reps = append(reps, newIdentityGatewayOpts(t, o))
	}
	alphaTok := idp.Token(t, idptest.Alpha, idptest.Password) // in admins
	betaTok := idp.Token(t, idptest.Beta, idptest.Password)
	beta := reps[0].connectAs(t, betaTok)

	echoB := map[string]any{"tool": "echo", "server": "b", "args": map[string]any{"text": "hi"}}
	call := func() chan awayAnswer { return callAway(t, beta, echoB) }
	// Replica 2 lists the call waiting on replica 1.
	waitPending := func(done chan awayAnswer) gateway.PendingApproval { return reps[1].waitPending(t, alphaTok, done) }

	done := call()
	p := waitPending(done)
	if p.Requester != idptest.BetaSub || p.Server != "b" || p.Tool != "echo" {
		t.Errorf("pending approval on the other replica: %+v", p)
	}
	if got := reps[1].pending(t, betaTok); len(got) != 0 {
		t.Errorf("beta, in no approver group, sees %+v", got)
	}
	if code := reps[1].adminDo(t, betaTok, "POST", "/admin/approvals/"+p.ID, `{"decision": "allow"}`, nil); code != http.StatusForbidden {
		t.Errorf("beta allowing their own call on the other replica: %d, want 403", code)
	}
	if code := reps[1].adminDo(t, alphaTok, "POST", "/admin/approvals/"+p.ID, `{"decision": "allow"}`, nil); code != http.StatusOK {
		t.Fatalf("alpha allowing on replica 2: %d", code)
	}
	if a := <-done; a.err != nil || a.res.IsError || text(a.res) != "hi" {
		t.Fatalf("beta's call on replica 1 after alpha allowed it on replica 2: %v %s", a.err, text(a.res))
	}
	if code := reps[0].adminDo(t, alphaTok, "POST", "/admin/approvals/"+p.ID, `{"decision": "deny"}`, nil); code != http.StatusNotFound {
		t.Errorf("deciding again on replica 1: %d, want 404", code)
	}

	done = call()
	p = waitPending(done)
	if code := reps[1].adminDo(t, alphaTok, "POST", "/admin/approvals/"+p.ID, `{"decision": "deny"}`, nil); code != http.StatusOK {
		t.Fatalf("alpha denying on replica 2: %d", code)
	}
	if a := <-done; a.err != nil || !a.res.IsError {
		t.Fatalf("beta's call after alpha denied it: %v %s", a.err, text(a.res))
	}

	db, err := pgstore.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	audit, err := policy.OpenPostgresAudit(t.Context(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	trail, err := audit.Read(t.Context(), policy.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	checkBetaAllowedThenDenied(t, trail.Records)
}
