package panel

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// approvalsToken is the gateway's shared token: its holder sees and
// decides every call that waits for an approver group (front/admin.go).
const approvalsToken = "approvals-test-token-0123456789"

// guardedGateway is a gateway whose server "guarded" (the calc tools)
// asks the "admins" group to approve every call.
func guardedGateway(t *testing.T) (*fixture, *gateway) {
	t.Helper()
	f := newFixture(t, map[string]any{"guarded": map[string]any{"url": calcServer(t) + "/mcp",
		"approve": map[string]any{"when": "always", "approvers": []string{"admins"}}}})
	return f, attached(t, f, approvalsToken)
}

type answer struct {
	res *mcp.CallToolResult
	err error
}

// callGuarded calls get-sum on guarded as an agent does; the call waits
// for its approver, so it runs off the test's goroutine.
func (g *gateway) callGuarded(t *testing.T, a int) chan answer {
	done := make(chan answer, 1)
	go func() {
		res, err := g.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp",
			Arguments: json.RawMessage(`{"tool":"get-sum","server":"guarded","args":{"a":` + string(rune('0'+a)) + `,"b":2}}`)})
		done <- answer{res, err}
	}()
	return done
}

func (a answer) text() string {
	if a.err != nil {
		return a.err.Error()
	}
	return mcptest.Text(a.res)
}

// waitPending waits until n calls wait for approval (each look is a
// request to the gateway); a call that ends first fails the test.
func waitPending(t *testing.T, r *Remote, n int, calls ...chan answer) []Approval {
	t.Helper()
	for {
		list, err := r.Approvals(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(list) >= n {
			return list
		}
		for _, done := range calls {
			select {
			case a := <-done:
				t.Fatalf("a call ended without waiting for its approver: %s", a.text())
			default:
			}
		}
	}
}

// waitedCol normalises how long a call has waited, in its column of
// seven cells and the two after it.
var waitedCol = regexp.MustCompile(`(?m)^(› |  )\d+[smh] +`)

// TestApprovalsScreen: attached, the panel lists the call that waits for
// an approver group, with its arguments and the count in the title; a
// then y allows it and the call completes; d then n leaves the next one
// waiting, d then y denies it and the call is refused.
func TestApprovalsScreen(t *testing.T) {
	f, g := guardedGateway(t)
	remote, err := NewRemote(g.url, approvalsToken)
	if err != nil {
		t.Fatal(err)
	}
	done := g.callGuarded(t, 1)
	waitPending(t, remote, 1, done)

	r := start(t, remote, f.home, 100, 16)
	r.waitFor("SOURCE")
	r.keys("5")
	r.waitFor("arguments of 1")
	s := r.screen()
	for _, want := range []string{"[5:approvals (1 waiting)]", `"a": 1`, "get-sum", "admins"} {
		if !strings.Contains(s, want) {
			t.Errorf("the approvals screen lacks %q:\n%s", want, s)
		}
	}
	s = waitedCol.ReplaceAllString(strings.ReplaceAll(s, remote.Base, "URL"), "${1}WAITED   ")
	t.Run("screen", func(t *testing.T) { goldenText(t, s) })

	r.keys("a")
	r.waitFor("allow get-sum on guarded (approval 1)? y to allow")
	r.keys("y")
	r.waitFor("allowed get-sum on guarded (approval 1)")
	if a := <-done; a.err != nil || a.res.IsError || a.text() != "The sum of 1 and 2 is 3." {
		t.Fatalf("the call after the panel allowed it: %s", a.text())
	}
	r.waitFor("No call waits for your approval.")
	if s := r.screen(); strings.Contains(s, "waiting)") {
		t.Errorf("the title counts a decided call:\n%s", s)
	}

	done = g.callGuarded(t, 3)
	waitPending(t, remote, 1, done)
	r.keys("5") // the screen reads the list when shown
	r.waitFor("arguments of 2")
	r.keys("d", "n")
	r.waitFor("not decided: get-sum on guarded (approval 2)")
	if got := waitPending(t, remote, 1, done); got[0].ID != "2" {
		t.Fatalf("after n, waiting: %+v", got)
	}
	r.keys("d")
	r.waitFor("deny get-sum on guarded (approval 2)? y to deny")
	r.keys("y")
	r.waitFor("denied get-sum on guarded (approval 2)")
	if a := <-done; a.err != nil || !a.res.IsError {
		t.Fatalf("the call after the panel denied it: %s", a.text())
	}
}

// TestApprovalsDecidedElsewhere: a call decided by someone else while the
// panel shows it gets the gateway's 404 in the message line (decided, or
// its call gave up), and the list then drops it; two waiting calls are
// counted in the plural.
func TestApprovalsDecidedElsewhere(t *testing.T) {
	f, g := guardedGateway(t)
	remote, err := NewRemote(g.url, approvalsToken)
	if err != nil {
		t.Fatal(err)
	}
	first := g.callGuarded(t, 1)
	waitPending(t, remote, 1, first)
	second := g.callGuarded(t, 2)
	list := waitPending(t, remote, 2, first, second)

	r := start(t, remote, f.home, 100, 16)
	r.keys("5")
	r.waitFor("5:approvals (2 waiting)")
	// Another approver allows the oldest, which the panel has selected.
	if err := remote.Decide(t.Context(), list[0].ID, true); err != nil {
		t.Fatal(err)
	}
	if a := <-first; a.err != nil || a.res.IsError {
		t.Fatalf("the call allowed elsewhere: %s", a.text())
	}
	r.keys("a", "y")
	r.waitFor("no such pending approval (it was decided, or its call gave up waiting")
	r.waitFor("5:approvals (1 waiting)")
	r.waitFor("arguments of " + list[1].ID)
	r.keys("d", "y")
	r.waitFor("denied get-sum on guarded (approval " + list[1].ID + ")")
	if a := <-second; a.err != nil || !a.res.IsError {
		t.Fatalf("the call the panel denied: %s", a.text())
	}
}

// TestApprovalsRefused: a gateway that refuses the list (here a wrong
// token: 401) gets one line on the approvals screen saying so and what
// to do, and the panel goes on working.
func TestApprovalsRefused(t *testing.T) {
	f, g := guardedGateway(t)
	remote, err := NewRemote(g.url, "wrong")
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, remote, f.home, 100, 16)
	r.keys("5")
	r.waitFor("approvals not shown: GET " + remote.Base + "/admin/approvals: 401 Unauthorized")
	if s := r.screen(); !strings.Contains(s, "SWITCHBOARD_TOKEN") {
		t.Errorf("the refusal does not say what to do:\n%s", s)
	}
	r.keys("1")
	r.waitFor("[1:servers]")
	r.tm.Send(tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}) // backwards, round to the last screen
	r.waitFor("[5:approvals]")
	r.keys("q")
}

// TestLocalPanelHasNoApprovals: a local panel has no approvals screen:
// no tab, 5 says where approvals are seen, tab cycles past it.
func TestLocalPanelHasNoApprovals(t *testing.T) {
	f := newFixture(t, nil)
	r := start(t, f.local, f.home, 100, 16)
	r.waitFor("SOURCE")
	if s := r.screen(); strings.Contains(s, "approvals") {
		t.Errorf("a local panel shows approvals:\n%s", s)
	}
	r.keys("5")
	r.waitFor("switchboard panel --attach URL")
	if s := r.screen(); !strings.Contains(s, "[1:servers]") {
		t.Errorf("5 left the servers screen of a local panel:\n%s", s)
	}
	r.keys("4", "tab")
	r.waitFor("[1:servers]")
}

// TestApprovalArgs: the arguments of a waiting call are shown bounded (in
// bytes and lines, with a note of their size) and as JSON, which escapes
// what could drive the terminal.
func TestApprovalArgs(t *testing.T) {
	m := newModel(t.Context(), &Remote{}, Options{Now: time.Now})
	lines := m.argsLines(map[string]any{"text": strings.Repeat("x", 10<<10), "esc": "\x1b[2J\x1b]52;c;aGk=\a"}, 5)
	all := strings.Join(lines, "\n")
	if len(lines) > 5 || len(all) > argsShown+100 {
		t.Errorf("10 KiB of arguments in 5 lines gave %d lines, %d bytes", len(lines), len(all))
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "KiB of arguments in all") {
		t.Errorf("the last line %q does not say how much was cut", last)
	}
	if strings.ContainsAny(all, "\x1b\a") || !strings.Contains(all, `\u001b[2J`) {
		t.Errorf("control characters reach the screen: %q", all)
	}
	many := map[string]any{}
	for i := range 50 {
		many[fmt.Sprint("k", i)] = i
	}
	if lines := m.argsLines(many, 6); len(lines) != 6 || !strings.Contains(lines[5], "of arguments in all") {
		t.Errorf("50 arguments in 6 lines: %q", lines)
	}
	if lines := m.argsLines(nil, 6); len(lines) != 1 || lines[0] != "(none)" {
		t.Errorf("no arguments: %q", lines)
	}
}
