package front

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// TestFastLaneProxyTool makes the same calls of the mcp tool through two
// gateways in proxy mode over HTTP, one with the fast lane and one
// without, and checks that every answer is the same, and that the lane
// took every call but those it never takes (a progress token, arguments
// that are not an object).
func TestFastLaneProxyTool(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) { testFastLaneProxyTool(t, stateless) })
	}
}

func testFastLaneProxyTool(t *testing.T, stateless bool) {
	mcptest.CheckNoLeaks(t)
	settings := map[string]any{"toolPrefix": "server", "output": map[string]int{"maxBytes": 2000, "maxLines": 50}}
	fast := newWatched(t, map[string]def{"f": fixture()}, settings)
	slow := newWatched(t, map[string]def{"f": fixture()}, settings)
	fcs, _ := fast.connectHTTPAt(t, HTTPOptions{Stateless: stateless}, nil, "2025-11-25")
	scs, _ := slow.connectHTTPAt(t, HTTPOptions{Stateless: stateless, NoFastLane: true}, nil, "2025-11-25")
	file := filepath.Join(t.TempDir(), "calls")

	cases := []struct {
		what string
		args any
		meta mcp.Meta
		fast bool
	}{
		{"status", map[string]any{}, nil, true},
		{"no arguments", nil, nil, true},
		{"a server's tools", map[string]any{"server": "f"}, nil, true},
		{"search", map[string]any{"search": "echo", "limit": 2}, nil, true},
		{"search, a whole limit written as a fraction", json.RawMessage(`{"search":"echo","limit":2.0}`), nil, true},
		{"describe", map[string]any{"describe": "echo"}, nil, true},
		{"call", map[string]any{"tool": "echo", "server": "f", "args": map[string]any{"text": "hello"}}, nil, true},
		{"call, escapes", map[string]any{"tool": "echo", "server": "f", "args": map[string]any{"text": "a <&> é \"q\" \\ \u2028\nb"}}, nil, true},
		{"call, args as a string (Parse takes it; the schema advertises an object)", map[string]any{"tool": "echo", "server": "f", "args": `{"text":"s"}`}, nil, true},
		{"call, no server", map[string]any{"tool": "echo", "args": map[string]any{"text": "x"}}, nil, true},
		{"call, numbers", json.RawMessage(`{"tool":"echo","server":"f","args":{"text":12345678901234567890}}`), nil, true},
		{"call over the bound", map[string]any{"tool": "big", "server": "f", "args": map[string]any{"bytes": 5000}}, nil, true},
		{"a tool error", map[string]any{"tool": "record", "server": "f", "args": map[string]any{"file": file, "then": "fail"}}, nil, true},
		{"arguments the tool refuses", map[string]any{"tool": "echo", "server": "f", "args": map[string]any{"text": 5}}, nil, true},
		{"an unknown tool", map[string]any{"tool": "nope", "server": "f"}, nil, true},
		{"an unknown server", map[string]any{"tool": "echo", "server": "nope"}, nil, true},
		{"resources", map[string]any{"operation": "resources.list", "server": "f"}, nil, true},
		{"a property the schema does not list (Parse refuses it)", map[string]any{"bogus": 1}, nil, true},
		{"a fractional limit", map[string]any{"search": "e", "limit": 1.5}, nil, true},
		{"a wrong type", map[string]any{"tool": 5}, nil, true},
		{"arguments that are not an object", json.RawMessage(`"search"`), nil, false},
		{"a progress token", map[string]any{"tool": "echo", "server": "f", "args": map[string]any{"text": "p"}}, mcp.Meta{"progressToken": "tok"}, false},
	}
	var lane []laneCase
	for _, c := range cases {
		lane = append(lane, laneCase{c.what, &mcp.CallToolParams{Name: proxy.ToolName, Arguments: c.args, Meta: c.meta}, c.fast})
	}
	sameOnLane(t, fast, slow, fcs, scs, lane)
	// The calls the fixture recorded: the tool error's, once per gateway.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 2 {
		t.Errorf("the fixture recorded %d calls of record, want 2 (one per gateway)", n)
	}
}

// TestFastLaneProxyApproval: a call of the mcp tool that an approval rule
// covers takes the lane and asks the client as the usual path does, the
// form going to the session's standalone stream; the client's answer
// decides whether the call is sent.
func TestFastLaneProxyApproval(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	fx := fixture()
	fx["approve"] = []string{"rec*"}
	g := newGateway(t, map[string]def{"fx": fx}, nil)
	log := filepath.Join(t.TempDir(), "calls")
	record := map[string]any{"tool": "record", "server": "fx", "args": map[string]any{"file": log, "then": ""}}
	for _, c := range []struct {
		decision string
		sent     int
	}{{"allow once", 1}, {"deny", 1}} {
		var asked atomic.Int32
		forms := make(chan string, 1)
		cs, _ := g.connectHTTPAt(t, HTTPOptions{}, answering(c.decision, &asked, forms), "2025-11-25")
		waitLaneStream(t, g, cs.ID())
		before := g.fastCalls()
		r := call(t, cs, "mcp", record)
		if g.fastCalls() != before+1 {
			t.Errorf("%s: the call did not take the lane", c.decision)
		}
		if asked.Load() != 1 || r.IsError != (c.decision == "deny") {
			t.Errorf("%s: asked %d times, answered %q (isError %v)", c.decision, asked.Load(), text(r), r.IsError)
		}
		if form := <-forms; !strings.Contains(form, `"record"`) || !strings.Contains(form, `"fx"`) {
			t.Errorf("%s: the form does not name the tool and the server:\n%s", c.decision, form)
		}
		data, _ := os.ReadFile(log)
		if n := strings.Count(string(data), "\n"); n != c.sent {
			t.Errorf("%s: the server has %d calls, want %d", c.decision, n, c.sent)
		}
	}
}

// waitLaneStream waits until the client session id has its standalone
// stream open, as the lane sees it: only then does the lane take the
// calls of a client that can be asked. go-sdk's client opens the stream on
// its own, with nothing to wait on, so this polls the lane's count, for as
// long as a busy machine may take.
func waitLaneStream(t *testing.T, g *testGateway, id string) {
	t.Helper()
	l := g.srv.lane.Load()
	deadline := time.Now().Add(30 * time.Second)
	for {
		l.mu.Lock()
		ls := l.sessions[id]
		open := ls != nil && ls.streams > 0
		l.mu.Unlock()
		if open {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the client's standalone stream never opened")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFastLaneProxyCancel cancels a call of the mcp tool on the fast lane
// with the client's notifications/cancelled, and checks that the server
// hears of it, as TestFastLaneCancel does for a tool of transparent mode.
func TestFastLaneProxyCancel(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"f": fixture()}, nil)
	cs, _ := g.connectHTTP(t, HTTPOptions{}, nil)
	file := filepath.Join(t.TempDir(), "calls")
	call(t, cs, "mcp", map[string]any{"server": "f"}) // connects f
	cancelOnLane(t, g, cs, file, func(args map[string]any) *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: proxy.ToolName, Arguments: map[string]any{"tool": "record", "server": "f", "args": args}}
	})
	if r := call(t, cs, "mcp", map[string]any{"tool": "echo", "server": "f", "args": map[string]any{"text": "still here"}}); !strings.Contains(text(r), "still here") {
		t.Errorf("after the cancelled call: %q", text(r))
	}
}
