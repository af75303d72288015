package switchboard

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
