package front

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// filesystem is the npm filesystem server over root, whose write_file is
// destructive by its annotations and read_text_file read-only.
func filesystem(t *testing.T, root string) def {
	c := mcptest.Peers(t).Filesystem(root)
	env := map[string]string{}
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return def{"command": c.Path, "args": c.Args, "env": env, "approve": "destructive"}
}

// answering returns client options whose elicitation handler gives
// decision (or, for "", waits until the request ends), counting the forms
// it was shown in *asked.
func answering(decision string, asked *atomic.Int32, forms chan<- string) *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		if forms != nil {
			select {
			case forms <- req.Params.Message:
			default:
			}
		}
		if decision == "" {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": decision}}, nil
	}}
}

// TestApprovalThroughServe is the acceptance test of approvals: with
// approve "destructive" on the filesystem server, write_file asks the
// client through elicitation and read_text_file does not; what the client
// answers decides whether the file is written at all.
func TestApprovalThroughServe(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "seen.txt"), []byte("read me"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, map[string]def{"fs": filesystem(t, root)}, nil)
	write := func(cs *mcp.ClientSession, name string) *mcp.CallToolResult {
		return call(t, cs, "mcp", map[string]any{"tool": "write_file", "server": "fs",
			"args": map[string]any{"path": filepath.Join(root, name), "content": "canary-" + name}})
	}
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(root, name))
		return err == nil
	}

	t.Run("read-only does not ask", func(t *testing.T) {
		var asked atomic.Int32
		cs := g.connectAt(t, answering("deny", &asked, nil), "2025-11-25")
		r := call(t, cs, "mcp", map[string]any{"tool": "read_text_file", "server": "fs", "args": map[string]any{"path": filepath.Join(root, "seen.txt")}})
		if r.IsError || !strings.Contains(text(r), "read me") || asked.Load() != 0 {
			t.Errorf("read_text_file: %q (isError %v), asked %d times; want the text, never asked", text(r), r.IsError, asked.Load())
		}
	})
	t.Run("allow once", func(t *testing.T) {
		var asked atomic.Int32
		forms := make(chan string, 1)
		cs := g.connectAt(t, answering("allow once", &asked, forms), "2025-11-25")
		if r := write(cs, "once1.txt"); r.IsError || !exists("once1.txt") {
			t.Fatalf("allowed write: %q, file written %v", text(r), exists("once1.txt"))
		}
		form := <-forms
		for _, want := range []string{`"write_file"`, `"fs"`, "canary-once1.txt", "approve"} {
			if !strings.Contains(form, want) {
				t.Errorf("the form does not show %q:\n%s", want, form)
			}
		}
		write(cs, "once2.txt")
		if asked.Load() != 2 || !exists("once2.txt") {
			t.Errorf("asked %d times for two calls allowed once, want 2", asked.Load())
		}
	})
	t.Run("allow for this session", func(t *testing.T) {
		var asked atomic.Int32
		cs := g.connectAt(t, answering("allow for this session", &asked, nil), "2025-11-25")
		write(cs, "s1.txt")
		write(cs, "s2.txt")
		if asked.Load() != 1 || !exists("s1.txt") || !exists("s2.txt") {
			t.Errorf("asked %d times, files %v %v; want asked once, both written", asked.Load(), exists("s1.txt"), exists("s2.txt"))
		}
		// Another client session has not been given that approval.
		var other atomic.Int32
		cs2 := g.connectAt(t, answering("deny", &other, nil), "2025-11-25")
		if r := write(cs2, "s3.txt"); !r.IsError || exists("s3.txt") || other.Load() != 1 {
			t.Errorf("another session: %q, asked %d times, written %v; want asked, denied, nothing written", text(r), other.Load(), exists("s3.txt"))
		}
	})
	t.Run("deny", func(t *testing.T) {
		var asked atomic.Int32
		cs := g.connectAt(t, answering("deny", &asked, nil), "2025-11-25")
		r := write(cs, "denied.txt")
		if !r.IsError || exists("denied.txt") {
			t.Fatalf("denied write: %q (isError %v), written %v; want an error and no file", text(r), r.IsError, exists("denied.txt"))
		}
		for _, want := range []string{"not approved", "sent nowhere", "config.json:1: mcpServers.fs.approve", "hint:"} {
			if !strings.Contains(text(r), want) {
				t.Errorf("the denial does not say %q: %s", want, text(r))
			}
		}
	})
	t.Run("client without elicitation", func(t *testing.T) {
		cs := g.connectAt(t, nil, "2025-11-25")
		r := write(cs, "noelicit.txt")
		if !r.IsError || exists("noelicit.txt") || !strings.Contains(text(r), "did not declare elicitation") {
			t.Errorf("write from a client without elicitation: %q, written %v; want it refused, saying why", text(r), exists("noelicit.txt"))
		}
	})
	t.Run("2026-07-28 client", func(t *testing.T) {
		var asked atomic.Int32
		cs := g.connect(t, answering("allow once", &asked, nil))
		if v := cs.InitializeResult().ProtocolVersion; v < "2026-07-28" {
			t.Fatalf("negotiated %s, want 2026-07-28 or later", v)
		}
		if r := write(cs, "modern.txt"); r.IsError || !exists("modern.txt") || asked.Load() != 1 {
			t.Errorf("write from a multi round-trip client: %q, asked %d, written %v; want asked once and written", text(r), asked.Load(), exists("modern.txt"))
		}
		var denied atomic.Int32
		cs2 := g.connect(t, answering("deny", &denied, nil))
		if r := write(cs2, "modern-denied.txt"); !r.IsError || exists("modern-denied.txt") || denied.Load() != 1 {
			t.Errorf("denied by a multi round-trip client: %q, asked %d, written %v; want asked, denied, nothing written", text(r), denied.Load(), exists("modern-denied.txt"))
		}
	})
}

// TestApprovalNoAnswer: a client that never answers the form is denied
// when the server's request timeout passes, and the call is not sent. The
// fixture's record tool counts what reaches the server.
func TestApprovalNoAnswer(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	fx := fixture()
	fx["approve"] = []string{"rec*"}
	fx["requestTimeoutMs"] = 1500
	g := newGateway(t, map[string]def{"fx": fx}, nil)
	var asked atomic.Int32
	cs := g.connectAt(t, answering("", &asked, nil), "2025-11-25")
	log := filepath.Join(t.TempDir(), "calls")
	if r := call(t, cs, "mcp", map[string]any{"server": "fx"}); r.IsError {
		t.Fatalf("listing: %s", text(r))
	}
	r := call(t, cs, "mcp", map[string]any{"tool": "record", "server": "fx", "args": map[string]any{"file": log, "then": ""}})
	if !r.IsError || !strings.Contains(text(r), "no answer within 1.5s") || asked.Load() != 1 {
		t.Errorf("unanswered: %q (asked %d); want denied for want of an answer", text(r), asked.Load())
	}
	if _, err := os.Stat(log); err == nil {
		t.Errorf("the server got the call that was never approved")
	}
	// echo matches no glob: it does not ask.
	if r := call(t, cs, "mcp", map[string]any{"tool": "echo", "server": "fx", "args": map[string]any{"text": "hi"}}); r.IsError || asked.Load() != 1 {
		t.Errorf("echo: %q, asked %d; want it called without asking", text(r), asked.Load())
	}
}

// TestApprovalDirectTool: a direct tool asks like the mcp tool does.
func TestApprovalDirectTool(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	fx := fixture()
	fx["approve"] = "always"
	fx["directTools"] = []string{"record"}
	g := newGateway(t, map[string]def{"fx": fx}, nil)
	log := filepath.Join(t.TempDir(), "calls")
	var asked atomic.Int32
	cs := g.connectAt(t, answering("deny", &asked, nil), "2025-11-25")
	r := call(t, cs, "fx_record", map[string]any{"file": log, "then": ""})
	if _, err := os.Stat(log); !r.IsError || err == nil || asked.Load() != 1 {
		t.Errorf("denied direct call: %q, asked %d, sent %v; want asked, denied, not sent", text(r), asked.Load(), err == nil)
	}
	var ok atomic.Int32
	cs2 := g.connectAt(t, answering("allow once", &ok, nil), "2025-11-25")
	if r := call(t, cs2, "fx_record", map[string]any{"file": log, "then": ""}); r.IsError || ok.Load() != 1 {
		t.Errorf("allowed direct call: %q, asked %d", text(r), ok.Load())
	}
	if data, _ := os.ReadFile(log); strings.Count(string(data), "\n") != 1 {
		t.Errorf("the server recorded %q, want exactly one call", data)
	}
}

// TestApprovalAnswerFromAnotherSession: a multi round-trip client's
// pending approval cannot be answered by another client session with the
// first one's requestState; the call stays with its own client, whose
// answer counts.
func TestApprovalAnswerFromAnotherSession(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	fx := fixture()
	fx["approve"] = "always"
	g := newGateway(t, map[string]def{"fx": fx}, nil)
	log := filepath.Join(t.TempDir(), "calls")
	manual := manualRounds()
	a := g.connect(t, manual)
	b := g.connect(t, manual)
	args := map[string]any{"tool": "record", "server": "fx", "args": map[string]any{"file": log, "then": ""}}
	first := call(t, a, "mcp", args)
	if first.RequestState == "" || len(first.InputRequests) != 1 {
		t.Fatalf("no approval form came back: %+v", first)
	}
	var id string
	for k, req := range first.InputRequests {
		if _, ok := req.(*mcp.ElicitParams); !ok {
			t.Fatalf("input request %T, want an elicitation", req)
		}
		id = k
	}
	allow := mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "allow once"}}}
	stolen, err := b.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: args, RequestState: first.RequestState, InputResponses: allow})
	if err != nil {
		t.Fatal(err)
	}
	if !stolen.IsError || !strings.Contains(text(stolen), "another client session") {
		t.Errorf("another session's answer: %q, want it refused", text(stolen))
	}
	if _, err := os.Stat(log); err == nil {
		t.Fatal("another session's answer sent the call")
	}
	deny := mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny"}}}
	own, err := a.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: args, RequestState: first.RequestState, InputResponses: deny})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(log); !own.IsError || err == nil || !strings.Contains(text(own), "not approved") {
		t.Errorf("its own client's denial: %q, sent %v; want denied, not sent", text(own), err == nil)
	}
}

// TestApprovalFailsClosedWithResult: a call an approval rule covers, from
// a client that declared no elicitation, is sent nowhere and answered with
// an error result (never a JSON-RPC error, never an input request) that
// names the rule and every way to have the call approved: through the mcp
// tool and a direct tool, over the go-sdk path (as serve over stdio), for a
// 2026-07-28 client (which got an input-required form, or a JSON-RPC
// error from go-sdk, on main), and on the fast lane.
func TestApprovalFailsClosedWithResult(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	fx := fixture()
	fx["approve"] = "always"
	fx["directTools"] = []string{"record"}
	g := newGateway(t, map[string]def{"fx": fx}, nil)
	lane, _ := g.connectHTTPAt(t, HTTPOptions{}, nil, "2025-11-25")
	clients := []struct {
		name string
		cs   *mcp.ClientSession
	}{
		{"2025-11-25", g.connectAt(t, nil, "2025-11-25")},
		{"2026-07-28", g.connect(t, nil)},
		{"2026-07-28, answering input requests itself", g.connect(t, &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})},
		{"fast lane", lane},
	}
	log := filepath.Join(t.TempDir(), "calls")
	args := map[string]any{"file": log, "then": ""}
	for _, c := range clients {
		for _, params := range []*mcp.CallToolParams{
			{Name: "mcp", Arguments: map[string]any{"tool": "record", "server": "fx", "args": args}},
			{Name: "fx_record", Arguments: args},
		} {
			before := g.fastCalls()
			r, err := c.cs.CallTool(t.Context(), params)
			if err != nil {
				t.Errorf("%s, %s: %v; want an error result", c.name, params.Name, err)
				continue
			}
			if !r.IsError || len(r.InputRequests) > 0 || r.RequestState != "" {
				t.Errorf("%s, %s: isError %v, input requests %v; want an error result", c.name, params.Name, r.IsError, r.InputRequests)
			}
			for _, want := range []string{`call of "record" on "fx" not approved`, "did not declare elicitation", "sent nowhere",
				"config.json:1: mcpServers.fx.approve", "a client that supports elicitation", "switchboard call record --server fx", "change the rule"} {
				if !strings.Contains(text(r), want) {
					t.Errorf("%s, %s: the result does not say %q:\n%s", c.name, params.Name, want, text(r))
				}
			}
			if c.name == "fast lane" && params.Name == "mcp" && g.fastCalls() == before {
				t.Errorf("%s, %s: the lane did not take the call", c.name, params.Name)
			}
		}
	}
	if _, err := os.Stat(log); err == nil {
		t.Error("a call no one approved reached the server")
	}
}
