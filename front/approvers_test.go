package front

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testkit/idptest"
	"github.com/switchboard-mcp/switchboard/policy"
)

// adminDo sends an admin request with token and decodes the answer into
// out (if set); it returns the status.
func (ig *identityGateway) adminDo(t *testing.T, token, method, path, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, ig.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

func (ig *identityGateway) pending(t *testing.T, token string) []gateway.PendingApproval {
	t.Helper()
	var body struct{ Approvals []gateway.PendingApproval }
	if code := ig.adminDo(t, token, "GET", "/admin/approvals", "", &body); code != 200 {
		t.Fatalf("GET /admin/approvals: %d", code)
	}
	return body.Approvals
}

// awayAnswer is what a call made in the background came to.
type awayAnswer struct {
	res *mcp.CallToolResult
	err error
}

// callAway calls the mcp tool with args in cs, in the background.
func callAway(t *testing.T, cs *mcp.ClientSession, args map[string]any) chan awayAnswer {
	done := make(chan awayAnswer, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: args})
		done <- awayAnswer{res, err}
	}()
	return done
}

// waitPending waits until token's user sees a pending approval (the call
// that done awaits reached the gate): each look is a request to the
// gateway. The call ending first fails the test.
func (ig *identityGateway) waitPending(t *testing.T, token string, done chan awayAnswer) gateway.PendingApproval {
	t.Helper()
	for {
		if p := ig.pending(t, token); len(p) > 0 {
			return p[0]
		}
		select {
		case a := <-done:
			t.Fatalf("the call ended without waiting for an approver: %v %v", a.err, text(a.res))
		default:
		}
	}
}

// TestApproverGroups: a call an approval rule with approvers covers waits
// for a member of an approver group, not the caller: beta's call is
// listed to alpha (in "admins"), not to beta, who may not decide it;
// alpha's allow lets it through, alpha's deny refuses the next; the
// audit trail names both the requester and the approver.
func TestApproverGroups(t *testing.T) {
	b := fixture()
	b["approve"] = map[string]any{"when": "always", "approvers": []string{"admins"}}
	ig := newIdentityGatewayOpts(t, identityOpts{servers: map[string]def{"b": b}})
	alphaTok := ig.idp.Token(t, idptest.Alpha, idptest.Password) // in admins
	betaTok := ig.idp.Token(t, idptest.Beta, idptest.Password)
	beta := ig.connectAs(t, betaTok)

	echoB := map[string]any{"tool": "echo", "server": "b", "args": map[string]any{"text": "hi"}}
	callB := func() chan awayAnswer { return callAway(t, beta, echoB) }
	waitPending := func(done chan awayAnswer) gateway.PendingApproval { return ig.waitPending(t, alphaTok, done) }

	done := callB()
	p := waitPending(done)
	if p.Requester != idptest.BetaSub || p.Server != "b" || p.Tool != "echo" || len(p.Approvers) != 1 || p.Approvers[0] != "admins" {
		t.Errorf("pending approval %+v", p)
	}
	if got := ig.pending(t, betaTok); len(got) != 0 {
		t.Errorf("beta, in no approver group, sees %+v", got)
	}
	if code := ig.adminDo(t, betaTok, "POST", "/admin/approvals/"+p.ID, `{"decision": "allow"}`, nil); code != http.StatusForbidden {
		t.Errorf("beta allowing their own call: %d, want 403", code)
	}
	if code := ig.adminDo(t, alphaTok, "POST", "/admin/approvals/"+p.ID, `{"decision": "yes"}`, nil); code != http.StatusBadRequest {
		t.Errorf("a decision that is neither allow nor deny: %d, want 400", code)
	}
	if code := ig.adminDo(t, alphaTok, "POST", "/admin/approvals/"+p.ID, `{"decision": "allow"}`, nil); code != 200 {
		t.Fatalf("alpha allowing: %d", code)
	}
	if a := <-done; a.err != nil || a.res.IsError || text(a.res) != "hi" {
		t.Fatalf("beta's call after alpha allowed it: %v %s", a.err, text(a.res))
	}
	if code := ig.adminDo(t, alphaTok, "POST", "/admin/approvals/"+p.ID, `{"decision": "allow"}`, nil); code != http.StatusNotFound {
		t.Errorf("deciding again: %d, want 404", code)
	}

	done = callB()
	p = waitPending(done)
	if code := ig.adminDo(t, alphaTok, "POST", "/admin/approvals/"+p.ID, `{"decision": "deny"}`, nil); code != 200 {
		t.Fatalf("alpha denying: %d", code)
	}
	if a := <-done; a.err != nil || !a.res.IsError {
		t.Fatalf("beta's call after alpha denied it: %v %s", a.err, text(a.res))
	}

	recs, _, err := policy.ReadAudit(filepath.Join(ig.g.srv.cfg.Dirs.StateDir(), policy.AuditFile), policy.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	checkBetaAllowedThenDenied(t, recs)
}

// checkBetaAllowedThenDenied checks that the approval records of recs are
// beta's calls, decided by alpha: allowed once, then denied.
func checkBetaAllowedThenDenied(t *testing.T, recs []policy.Record) {
	t.Helper()
	var decisions []string
	for _, r := range recs {
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

// TestGroupApprovalRules: a rule may grant its group tools that ask first
// (its "approve"): beta's rule grants b with an approver group, alpha's
// grants b freely. Alpha's call goes at once; beta's waits until alpha, an
// approver, allows it, and its audit record names the rule's place in the
// configuration, beta and alpha.
func TestGroupApprovalRules(t *testing.T) {
	ig := newIdentityGatewayOpts(t, identityOpts{rules: []any{
		map[string]any{"group": "alpha", "tools": []string{"mcp__a__*", "mcp__b__*"}},
		map[string]any{"group": "beta", "tools": []string{"mcp__b__*"}, "approve": map[string]any{"when": "always", "approvers": []string{"admins"}}},
	}})
	alphaTok := ig.idp.Token(t, idptest.Alpha, idptest.Password)
	betaTok := ig.idp.Token(t, idptest.Beta, idptest.Password)
	alpha, beta := ig.connectAs(t, alphaTok), ig.connectAs(t, betaTok)
	echo := map[string]any{"tool": "echo", "server": "b", "args": map[string]any{"text": "hi"}}

	if r := call(t, alpha, "mcp", echo); r.IsError || text(r) != "hi" {
		t.Fatalf("alpha, whose rule grants b without approval: %s", text(r))
	}
	if p := ig.pending(t, alphaTok); len(p) != 0 {
		t.Fatalf("alpha's call was listed for approval: %+v", p)
	}
	done := callAway(t, beta, echo)
	p := []gateway.PendingApproval{ig.waitPending(t, alphaTok, done)}
	if p[0].Requester != idptest.BetaSub || !strings.Contains(p[0].Rule, "settings.identity.rules[1].approve") {
		t.Errorf("pending approval %+v: want beta's, under settings.identity.rules[1].approve", p[0])
	}
	if code := ig.adminDo(t, alphaTok, "POST", "/admin/approvals/"+p[0].ID, `{"decision": "allow"}`, nil); code != 200 {
		t.Fatalf("alpha allowing: %d", code)
	}
	if a := <-done; a.err != nil || a.res.IsError || text(a.res) != "hi" {
		t.Fatalf("beta's call after alpha allowed it: %v %s", a.err, text(a.res))
	}
	recs, _, err := policy.ReadAudit(filepath.Join(ig.g.srv.cfg.Dirs.StateDir(), policy.AuditFile), policy.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var approvals []string
	for _, r := range recs {
		if r.Event == policy.EventApproval {
			approvals = append(approvals, r.User+" "+r.Decision+" by "+r.Approver+" under "+r.Rule)
		}
	}
	if len(approvals) != 1 || !strings.HasPrefix(approvals[0], idptest.BetaSub+" allow-once by "+idptest.AlphaSub) || !strings.Contains(approvals[0], "rules[1].approve") {
		t.Errorf("approval records %q", approvals)
	}
}
