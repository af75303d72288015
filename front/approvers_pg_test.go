package front

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	call := func() chan answer {
		done := make(chan answer, 1)
		go func() {
			res, err := beta.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"tool": "echo", "server": "b", "args": map[string]any{"text": "hi"}}})
			done <- answer{res, err}
		}()
		return done
	}
	// waitPending waits until replica 2 lists the call waiting on
	// replica 1: each look is a request.
	waitPending := func(done chan answer) gateway.PendingApproval {
		for {
			if p := reps[1].pending(t, alphaTok); len(p) > 0 {
				return p[0]
			}
			select {
			case a := <-done:
				t.Fatalf("beta's call ended without waiting for an approver: %v %v", a.err, text(a.res))
			default:
			}
		}
	}

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
	var decisions []string
	for _, r := range trail.Records {
		if r.Event == policy.EventApproval {
			decisions = append(decisions, r.Decision)
			if r.User != idptest.BetaSub || r.Approver != idptest.AlphaSub {
				t.Errorf("approval record names user %q and approver %q, want %s and %s", r.User, r.Approver, idptest.BetaSub, idptest.AlphaSub)
			}
		}
	}
	if strings.Join(decisions, ",") != "allow-once,deny" {
		t.Errorf("approval decisions %q, want allow-once then deny", decisions)
	}
}
