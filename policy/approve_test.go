package policy

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
)

func TestDestructive(t *testing.T) {
	f, tr := false, true
	for _, tc := range []struct {
		name string
		ann  *mcp.ToolAnnotations
		want bool
	}{
		{"no annotations", nil, true},
		{"empty annotations", &mcp.ToolAnnotations{}, true},
		{"read-only", &mcp.ToolAnnotations{ReadOnlyHint: true}, false},
		{"read-only and destructive", &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &tr}, false},
		{"not destructive", &mcp.ToolAnnotations{DestructiveHint: &f}, false},
		{"destructive", &mcp.ToolAnnotations{DestructiveHint: &tr}, true},
		{"idempotent only", &mcp.ToolAnnotations{IdempotentHint: true}, true},
	} {
		if got := Destructive(tc.ann); got != tc.want {
			t.Errorf("%s: Destructive = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestNeeds(t *testing.T) {
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}
	globs := config.Approval{Mode: config.ApproveTools, Tools: []string{"write_*", "gh_create_?ssue"}}
	for _, tc := range []struct {
		rule     config.Approval
		tool     string
		prefixed string
		ann      *mcp.ToolAnnotations
		want     bool
	}{
		{config.Approval{}, "rm", "fs_rm", nil, false},
		{config.Approval{Mode: config.ApproveNever}, "rm", "fs_rm", nil, false},
		{config.Approval{Mode: config.ApproveAlways}, "read", "fs_read", ro, true},
		{config.Approval{Mode: config.ApproveDestructive}, "read", "fs_read", ro, false},
		{config.Approval{Mode: config.ApproveDestructive}, "rm", "fs_rm", nil, true},
		{globs, "write_file", "fs_write_file", ro, true},
		{globs, "create_issue", "gh_create_issue", nil, true},
		{globs, "read_file", "fs_read_file", nil, false},
	} {
		if got := Needs(tc.rule, tc.tool, tc.prefixed, tc.ann); got != tc.want {
			t.Errorf("Needs(%v %v, %s) = %v, want %v", tc.rule.Mode, tc.rule.Tools, tc.prefixed, got, tc.want)
		}
	}
	un := Unmatched(globs, []string{"write_file", "read_file"}, func(s string) string { return "fs_" + s })
	if len(un) != 1 || un[0] != "gh_create_?ssue" {
		t.Errorf("Unmatched = %v, want [gh_create_?ssue]", un)
	}
}

// TestAsk: only one of the three decisions, in time, allows; everything
// else is a denial that says why.
func TestAsk(t *testing.T) {
	req := &Request{Server: "s", Tool: "t"}
	answer := func(d Decision, err error) Approver {
		return func(context.Context, *Request) (Decision, error) { return d, err }
	}
	for _, tc := range []struct {
		name    string
		a       Approver
		want    Decision
		why     string
		unasked bool
	}{
		{"none", nil, Deny, "no one to ask", true},
		{"once", answer(AllowOnce, nil), AllowOnce, "", false},
		{"session", answer(AllowSession, nil), AllowSession, "", false},
		{"deny", answer(Deny, nil), Deny, "denied", false},
		{"error", answer(AllowOnce, errors.New("client gone")), Deny, "client gone", false},
		{"no elicitation", answer(AllowOnce, ErrNoElicitation), Deny, "did not declare elicitation", true},
		{"malformed", answer("yes please", nil), Deny, "not one of", false},
		{"late", func(ctx context.Context, _ *Request) (Decision, error) { <-ctx.Done(); return AllowOnce, nil }, Deny, "no answer within", false},
	} {
		got := Ask(t.Context(), tc.a, req, 50*time.Millisecond)
		if got.Decision != tc.want || !strings.Contains(got.Why, tc.why) || got.Unasked != tc.unasked {
			t.Errorf("%s: %+v, want %s (%q), unasked %v", tc.name, got, tc.want, tc.why, tc.unasked)
		}
	}
}

// TestDeniedUnasked: a denial because no one could be asked names the
// rule and every way to have the call approved; one a person gave says
// how to stop being asked.
func TestDeniedUnasked(t *testing.T) {
	req := &Request{Server: "fs", Tool: "write_file", Rule: config.Approval{Mode: config.ApproveAlways}}
	unasked := (&DeniedError{Request: req, Why: ErrNoElicitation.Error(), Unasked: true}).Error()
	for _, want := range []string{`call of "write_file" on "fs" not approved`, "did not declare elicitation", "sent nowhere", "no one could be asked",
		"a client that supports elicitation", "switchboard call write_file --server fs", "change the rule", req.Rule.Where()} {
		if !strings.Contains(unasked, want) {
			t.Errorf("the unasked denial does not say %q: %s", want, unasked)
		}
	}
	denied := (&DeniedError{Request: req, Why: "denied"}).Error()
	if !strings.Contains(denied, `"allow for this session"`) || strings.Contains(denied, "no one could be asked") {
		t.Errorf("a person's denial: %s", denied)
	}
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		res  *mcp.ElicitResult
		want Decision
		err  bool
	}{
		{&mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow once"}}, AllowOnce, false},
		{&mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow for this session"}}, AllowSession, false},
		{&mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny"}}, Deny, false},
		{&mcp.ElicitResult{Action: "decline"}, Deny, false},
		{&mcp.ElicitResult{Action: "cancel"}, Deny, false},
		{&mcp.ElicitResult{Action: "accept"}, Deny, true},
		{&mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": 1}}, Deny, true},
		{&mcp.ElicitResult{Action: "sure"}, Deny, true},
		{nil, Deny, true},
	} {
		got, err := Decide(tc.res)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("Decide(%+v) = %s, %v; want %s, error %v", tc.res, got, err, tc.want, tc.err)
		}
	}
}

func TestGrants(t *testing.T) {
	var g Grants
	if g.Allowed("s", "t") {
		t.Fatal("an empty Grants allows")
	}
	g.Grant("s", "t")
	if !g.Allowed("s", "t") || g.Allowed("s", "u") || g.Allowed("x", "t") {
		t.Error("a grant is not for exactly one server's tool")
	}
}

func TestArgsPreview(t *testing.T) {
	long := strings.Repeat("é", 3000)
	got := ArgsPreview(map[string]any{"text": long}, 100)
	if len(got) > 160 || !strings.Contains(got, "more bytes not shown") || !strings.HasPrefix(got, "{") {
		t.Errorf("preview of a long argument = %q", got)
	}
	if got := ArgsPreview(nil, 100); got != "{}" {
		t.Errorf("preview of no arguments = %q, want {}", got)
	}
}

// FuzzDecide: any answer a client sends decodes to one of the decisions,
// and only the exact choices allow.
func FuzzDecide(f *testing.F) {
	f.Add(`{"action":"accept","content":{"decision":"allow once"}}`)
	f.Add(`{"action":"decline"}`)
	f.Add(`{"action":"accept","content":{"decision":["allow once"]}}`)
	f.Fuzz(func(t *testing.T, data string) {
		var res mcp.ElicitResult
		if json.Unmarshal([]byte(data), &res) != nil {
			return
		}
		d, err := Decide(&res)
		if d != AllowOnce && d != AllowSession && d != Deny {
			t.Fatalf("decision %q", d)
		}
		if d.Allows() && (err != nil || res.Action != "accept") {
			t.Fatalf("%s allows: %s, %v", data, d, err)
		}
	})
}
