package gateway

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/policy"
)

// TestLibraryApprover: a library host's Options.Approver decides the calls
// an approval rule covers; without one they are denied. The fixture's
// record tool counts what reaches the server.
func TestLibraryApprover(t *testing.T) {
	fx := fixture("good")
	fx["approve"] = []string{"record"}
	log := filepath.Join(t.TempDir(), "calls")
	sent := func() int {
		data, _ := os.ReadFile(log)
		return strings.Count(string(data), "\n")
	}
	record := `{"tool": "record", "server": "fx", "args": {"file": ` + quote(log) + `, "then": ""}}`

	var answer atomic.Value
	var asked atomic.Int32
	var last atomic.Pointer[policy.Request]
	e := engineIn(t, t.TempDir(), map[string]def{"fx": fx}, nil, &Options{Approver: func(ctx context.Context, req *policy.Request) (policy.Decision, error) {
		asked.Add(1)
		last.Store(req)
		return answer.Load().(policy.Decision), nil
	}})

	answer.Store(policy.Deny)
	r := handle(t, e, record)
	if !r.IsError || sent() != 0 {
		t.Fatalf("denied: %q, sent %d; want an error and nothing sent", r.Text, sent())
	}
	wantText(t, r, "not approved", "sent nowhere", "config.json:4: mcpServers.fx.approve")
	if req := last.Load(); req.Tool != "record" || req.Server != "fx" || req.Prefixed != "fx_record" || req.Rule.Mode != config.ApproveTools {
		t.Errorf("the approver was asked %+v", req)
	}

	answer.Store(policy.AllowOnce)
	must(t, e, record)
	must(t, e, record)
	if sent() != 2 || asked.Load() != 3 {
		t.Errorf("allowed once twice: sent %d, asked %d; want 2 and 3", sent(), asked.Load())
	}

	// Allowed for the session: the engine's own session, here.
	answer.Store(policy.AllowSession)
	must(t, e, record)
	answer.Store(policy.Deny)
	must(t, e, record)
	if sent() != 4 || asked.Load() != 4 {
		t.Errorf("allowed for the session: sent %d, asked %d; want 4 and 4", sent(), asked.Load())
	}
	// A new session has not.
	s := e.NewSession()
	if r := s.Handle(t.Context(), []byte(record)); !r.IsError || sent() != 4 {
		t.Errorf("a new session: %q, sent %d; want denied", r.Text, sent())
	}
	// echo matches no rule.
	must(t, e, `{"tool": "echo", "server": "fx", "args": {"text": "hi"}}`)
	if asked.Load() != 5 {
		t.Errorf("asked %d times, want 5: echo does not ask", asked.Load())
	}
}

// TestNoApproverFailsClosed: no approver, no call.
func TestNoApproverFailsClosed(t *testing.T) {
	fx := fixture("good")
	log := filepath.Join(t.TempDir(), "calls")
	e := engineIn(t, t.TempDir(), map[string]def{"fx": fx}, map[string]any{"approve": "always"}, nil)
	r := handle(t, e, `{"tool": "record", "server": "fx", "args": {"file": `+quote(log)+`, "then": ""}}`)
	if _, err := os.Stat(log); !r.IsError || err == nil {
		t.Fatalf("no approver: %q; want denied and nothing sent", r.Text)
	}
	wantText(t, r, "there is no one to ask", "settings.approve")
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestAuditTrail: calls and approval decisions are in the audit trail,
// with sizes and without the arguments or results, unless
// settings.audit.payloads asks for them.
func TestAuditTrail(t *testing.T) {
	const canary = "canary-7f3a9c"
	for _, payloads := range []bool{false, true} {
		home := t.TempDir()
		fx := fixture("good")
		fx["approve"] = []string{"record"}
		e := engineIn(t, home, map[string]def{"fx": fx}, map[string]any{"audit": map[string]any{"payloads": payloads}}, nil)
		must(t, e, `{"tool": "echo", "server": "fx", "args": {"text": "`+canary+`"}}`)
		handle(t, e, `{"tool": "record", "server": "fx", "args": {"file": "`+canary+`", "then": ""}}`)
		e.Close()

		path := filepath.Join(home, ".local", "state", "switchboard", policy.AuditFile)
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("audit file: %v, mode %v; want 0600", err, st.Mode().Perm())
		}
		data, _ := os.ReadFile(path)
		if got := strings.Contains(string(data), canary); got != payloads {
			t.Errorf("payloads %v: the canary argument is in the audit trail: %v\n%s", payloads, got, data)
		}
		recs, _, _ := policy.ReadAudit(path, policy.Filter{Server: "fx"})
		if len(recs) != 3 {
			t.Fatalf("%d records, want the echo call, the approval and the record call:\n%s", len(recs), data)
		}
		echo, ask, rec := recs[0], recs[1], recs[2]
		if echo.Event != policy.EventCall || echo.Tool != "echo" || echo.Decision != "allowed" || echo.Outcome != "ok" ||
			echo.ArgsBytes == 0 || echo.ResultBytes == 0 || echo.Session == "" || echo.Time.IsZero() {
			t.Errorf("echo record %+v", echo)
		}
		if ask.Event != policy.EventApproval || ask.Decision != "deny" || !strings.Contains(ask.Rule, "mcpServers.fx.approve") || !strings.Contains(ask.Why, "no one to ask") {
			t.Errorf("approval record %+v", ask)
		}
		if rec.Event != policy.EventCall || rec.Decision != "denied" || rec.Outcome != "not-sent" || rec.Session != echo.Session {
			t.Errorf("denied call record %+v", rec)
		}
	}
}

// TestApproveGlobMatchingNothing: a glob of an approval rule that matches
// none of the server's tools is a warning naming the file and line, in
// the server's listing and in status.
func TestApproveGlobMatchingNothing(t *testing.T) {
	fx := fixture("good")
	fx["approve"] = []string{"ech?", "wirte_*"}
	e := engineIn(t, t.TempDir(), map[string]def{"fx": fx}, nil, nil)
	want := `config.json:4: mcpServers.fx.approve: the glob "wirte_*" matches none of the tools of "fx", so it asks for nothing`
	r := must(t, e, `{"server": "fx"}`)
	wantText(t, r, "warning: ")
	wantText(t, r, want)
	if strings.Contains(r.Text, `"ech?"`) {
		t.Errorf("a glob that matches is reported:\n%s", r.Text)
	}
	st := must(t, e, `{}`)
	wantText(t, st, want)
}
