package front

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/policy"
)

// tenCalls is a 10-call task as one script: the echo tool of the fixture
// called ten times, the answer their texts joined.
const tenCalls = `const out = [];
for (let i = 0; i < 10; i++) {
  const r = await tools.call("echo", {text: "n" + i}, {server: "fx"});
  if (!r.ok) throw new Error(r.error.message);
  out.push(r.data.content[0].text);
}
console.log("calls", out.length);
return out.join(",")`

// TestScriptModeOffChangesNothing: without settings.scriptMode the tool
// list is the mcp tool alone, and a call of mcpScript is unknown.
func TestScriptModeOffChangesNothing(t *testing.T) {
	g := newGateway(t, map[string]def{"fx": fixture()}, nil)
	cs := g.connect(t, nil)
	if got := toolNames(t, cs); !slices.Equal(got, []string{"mcp"}) {
		t.Errorf("tools %v, want [mcp]", got)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcpScript", Arguments: map[string]any{"script": "1"}})
	if err == nil && !res.IsError {
		t.Errorf("mcpScript answered without script mode: %q", text(res))
	}
}

// TestScriptTool: with settings.scriptMode a 10-call task is one call of
// mcpScript whose answer is the task's result, over an in-memory client
// and over Streamable HTTP.
func TestScriptTool(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"fx": fixture()}, map[string]any{"scriptMode": true})
	ts := g.serveHTTP(t, HTTPOptions{})
	httpClient, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { httpClient.Close() })
	for name, cs := range map[string]*mcp.ClientSession{"in-memory": g.connect(t, nil), "http": httpClient} {
		t.Run(name, func(t *testing.T) {
			if got := toolNames(t, cs); !slices.Equal(got, []string{"mcp", "mcpScript"}) {
				t.Errorf("tools %v, want [mcp mcpScript]", got)
			}
			res := call(t, cs, "mcpScript", map[string]any{"script": tenCalls})
			want := "n0,n1,n2,n3,n4,n5,n6,n7,n8,n9\nconsole:\ncalls 10"
			if res.IsError || text(res) != want {
				t.Errorf("got %q (error %v), want %q", text(res), res.IsError, want)
			}
			var d struct {
				Operation string `json:"operation"`
				Script    struct {
					SHA256 string `json:"sha256"`
					Calls  int    `json:"calls"`
				} `json:"script"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &d); err != nil || d.Operation != "script" || d.Script.Calls != 10 || len(d.Script.SHA256) != 64 {
				t.Errorf("details %s", b)
			}
		})
	}
}

// TestScriptErrorsForAgents: a syntax error names line:col and the text,
// an unknown tool gives the suggestions the mcp tool gives.
func TestScriptErrorsForAgents(t *testing.T) {
	g := newGateway(t, map[string]def{"fx": fixture()}, map[string]any{"scriptMode": true})
	cs := g.connect(t, nil)
	res := call(t, cs, "mcpScript", map[string]any{"script": "const a = 1;\nconst b = ;"})
	if !res.IsError || !strings.Contains(text(res), "line 2:11") || !strings.Contains(text(res), "const b = ;") {
		t.Errorf("syntax error: %q", text(res))
	}
	res = call(t, cs, "mcpScript", map[string]any{"script": `const r = await tools.call("ecoh", {text: "x"}); return r`})
	var v struct {
		OK    bool
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal([]byte(text(res)), &v); err != nil || v.OK || v.Error.Code != "unknown_tool" || !strings.Contains(v.Error.Message, "did you mean") || !strings.Contains(v.Error.Message, "echo") {
		t.Errorf("unknown tool: %q", text(res))
	}
	res = call(t, cs, "mcpScript", map[string]any{"script": "null.x", "extra": 1})
	if !res.IsError {
		t.Errorf("an unknown argument: %q, want an error", text(res))
	}
}

// TestScriptApprovalDenied: an inner call an approval rule covers asks the
// outer call's client mid-script; denied, the script sees {ok: false,
// code: "denied"}, the server gets nothing, and the audit trail marks the
// approval and the call as the script's.
func TestScriptApprovalDenied(t *testing.T) {
	fx := fixture()
	fx["approve"] = []string{"record"}
	home := t.TempDir()
	g := newGatewayIn(t, home, map[string]def{"fx": fx}, map[string]any{"scriptMode": true}, Options{})
	var asked atomic.Int32
	// A client of 2025-11-25 is asked during the call; one of 2026-07-28
	// cannot be (its approvals are multi round-trip: a script is not
	// suspended, and the call is denied, fail closed, as below).
	cs := g.connectAt(t, answering("deny", &asked, nil), "2025-11-25")
	file := filepath.Join(t.TempDir(), "calls")
	src := `const e = await tools.call("echo", {text: "before"}, {server: "fx"});
const r = await tools.call("record", {file: ` + jsString(file) + `, then: ""}, {server: "fx"});
return [e.ok, r.ok, r.error && r.error.code]`
	res := call(t, cs, "mcpScript", map[string]any{"script": src})
	if text(res) != `[true,false,"denied"]` || asked.Load() != 1 {
		t.Errorf("got %q, asked %d; want [true,false,\"denied\"], asked once", text(res), asked.Load())
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("the denied call reached the server")
	}
	g.srv.Close()
	recs, _, err := policy.ReadAudit(filepath.Join(home, ".local", "state", "switchboard", policy.AuditFile), policy.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d audit records, want echo, the approval and the denied call: %+v", len(recs), recs)
	}
	for _, r := range recs {
		if len(r.Script) != 64 || r.Script != recs[0].Script {
			t.Errorf("record %+v not marked as the script's", r)
		}
	}
}

// TestScriptApprovalModernClient: a client of 2026-07-28 cannot be asked
// in the middle of a script: the call is denied, saying why, and nothing
// reaches the server.
func TestScriptApprovalModernClient(t *testing.T) {
	fx := fixture()
	fx["approve"] = []string{"record"}
	g := newGateway(t, map[string]def{"fx": fx}, map[string]any{"scriptMode": true})
	var asked atomic.Int32
	cs := g.connect(t, answering("allow once", &asked, nil))
	file := filepath.Join(t.TempDir(), "calls")
	res := call(t, cs, "mcpScript", map[string]any{"script": `const r = await tools.call("record", {file: ` + jsString(file) + `, then: ""}, {server: "fx"}); return r.error.code`})
	if text(res) != "denied" || asked.Load() != 0 {
		t.Errorf("got %q, asked %d; want \"denied\", not asked", text(res), asked.Load())
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("the call reached the server")
	}
}

// TestScriptCancel: cancelling the call of a script cancels its inner call
// in flight, and the server hears of it.
func TestScriptCancel(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"fx": fixture()}, map[string]any{"scriptMode": true})
	cs := g.connect(t, nil)
	file := filepath.Join(t.TempDir(), "calls")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcpScript", Arguments: map[string]any{"script": `await tools.call("record", {file: ` + jsString(file) + `, then: "wait"}, {server: "fx"}); "done"`}})
		errc <- err
	}()
	waitFor(t, file, "called")
	cancel()
	if err := <-errc; err == nil {
		t.Error("the cancelled call returned no error")
	}
	waitFor(t, file, "cancelled")
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
