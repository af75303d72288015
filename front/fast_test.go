package front

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// connectHTTP serves the gateway over Streamable HTTP with opts and
// connects a go-sdk client to it.
func (g *testGateway) connectHTTP(t *testing.T, opts HTTPOptions, copts *mcp.ClientOptions) (*mcp.ClientSession, string) {
	t.Helper()
	return g.connectHTTPAt(t, opts, copts, "")
}

// connectHTTPAt is connectHTTP for a client that asks for a protocol
// revision ("" for the newest).
func (g *testGateway) connectHTTPAt(t *testing.T, opts HTTPOptions, copts *mcp.ClientOptions, version string) (*mcp.ClientSession, string) {
	t.Helper()
	ts := g.serveHTTP(t, opts)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, copts).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, ts.URL + "/mcp"
}

// fastCalls is how many calls the gateway's fast lane served, as its
// metrics count them (switchboard_fast_calls_total).
func (g *testGateway) fastCalls() int64 {
	return int64(g.srv.opts.Metrics.fast.Load())
}

// laneCase is one tool call made through a gateway with the fast lane and
// through one without.
type laneCase struct {
	what   string
	params *mcp.CallToolParams
	fast   bool // the lane takes it
}

// sameOnLane makes each case through fcs, a client of fast, and scs, a
// client of slow (NoFastLane), and checks that the answers are equal once
// each gateway's spill files and home are masked, and that fast's lane
// took exactly the cases it should. Where both gateways are watched
// (newWatched), it checks after each case that they showed the same of it
// too: call reports, log lines, audit records and metrics. It returns the
// answers through fast.
func sameOnLane(t *testing.T, fast, slow *testGateway, fcs, scs *mcp.ClientSession, cases []laneCase) []string {
	t.Helper()
	spillDir := regexp.MustCompile(`(` + regexp.QuoteMeta(fast.srv.opts.Engine.SpillDir) + `|` + regexp.QuoteMeta(slow.srv.opts.Engine.SpillDir) + `)/p[0-9]+-[0-9]+`)
	answer := func(cs *mcp.ClientSession, p *mcp.CallToolParams) string {
		res, err := cs.CallTool(t.Context(), p)
		if err != nil {
			return "error: " + err.Error()
		}
		js, _ := json.Marshal(res)
		out := spillDir.ReplaceAllString(string(js), "SPILL")
		return strings.NewReplacer(fast.home, "HOME", slow.home, "HOME").Replace(out)
	}
	watched := fast.seen != nil && slow.seen != nil
	if watched {
		fast.seen.take(t) // what connecting showed
		slow.seen.take(t)
	}
	var answers []string
	want := int64(0)
	for _, c := range cases {
		before := fast.fastCalls()
		got, exp := answer(fcs, c.params), answer(scs, c.params)
		answers = append(answers, got)
		if got != exp {
			t.Errorf("%s: with the fast lane\n%s\nwithout\n%s", c.what, got, exp)
		}
		if watched {
			if got, exp := fast.seen.take(t), slow.seen.take(t); got != exp {
				t.Errorf("%s: with the fast lane, the gateway showed\n%s\nwithout\n%s", c.what, got, exp)
			}
		}
		if took := fast.fastCalls() > before; took != c.fast {
			t.Errorf("%s: the fast lane took it: %v, want %v (answer %s)", c.what, took, c.fast, got)
		}
		if c.fast {
			want++
		}
	}
	if n := fast.fastCalls(); n != want {
		t.Errorf("fast calls = %d, want %d", n, want)
	}
	return answers
}

// TestFastLaneSameAnswers makes the same calls through two gateways over
// HTTP, one with the fast lane and one without, and checks that every
// answer is the same, and that the lane took the calls it may take and no
// other.
//
// The upstream is reached at 2025-11-25 (the default over stdio) and at
// 2026-07-28 ("latest"), where each request carries the _meta go-sdk's
// client puts on its own (see stdioConn.noteMeta).
//
// In proxy mode the lane takes the calls of direct tools (directTools),
// whose results are always bounded (gateway.Engine.Bound).
func TestFastLaneSameAnswers(t *testing.T) {
	for _, upstream := range []string{"auto", "latest"} {
		for _, stateless := range []bool{false, true} {
			t.Run(fmt.Sprintf("upstream=%s/stateless=%v", upstream, stateless), func(t *testing.T) { testFastLaneSameAnswers(t, upstream, stateless, "") })
		}
	}
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct/stateless=%v", stateless), func(t *testing.T) { testFastLaneSameAnswers(t, "auto", stateless, "f_") })
	}
}

// testFastLaneSameAnswers: prefix "" for transparent mode, else proxy mode
// with direct tools named prefix+tool.
func testFastLaneSameAnswers(t *testing.T, version string, stateless bool, prefix string) {
	mcptest.CheckNoLeaks(t)
	settings := map[string]any{"toolPrefix": "none", "output": map[string]int{"maxBytes": 2000, "maxLines": 50}}
	upstream := fixture()
	upstream["protocolVersion"] = version
	if prefix != "" {
		settings["toolPrefix"] = "server"
		upstream["directTools"] = true
	}
	fast := newWatched(t, map[string]def{"f": upstream}, settings)
	slow := newWatched(t, map[string]def{"f": upstream}, settings)

	// Over stateless HTTP, a client of 2026-07-28 goes the usual way (see
	// TestFastLaneNotNewest).
	fcs, _ := fast.connectHTTPAt(t, HTTPOptions{Stateless: stateless}, nil, "2025-11-25")
	scs, _ := slow.connectHTTPAt(t, HTTPOptions{Stateless: stateless, NoFastLane: true}, nil, "2025-11-25")
	file := filepath.Join(t.TempDir(), "calls")

	cases := []laneCase{
		{"plain text", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}, true},
		{"escapes and lines", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "line one\nline two é <&> \"quoted\" \\ \u2028"}}, true},
		{"empty text", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": ""}}, true},
		{"no arguments", &mcp.CallToolParams{Name: "echo"}, true},
		{"over the bytes bound", &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"bytes": 5000}}, true},
		{"at the bytes bound", &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"bytes": 2000}}, true},
		{"over the lines bound", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": strings.Repeat("l\n", 60)}}, true},
		{"a tool error", &mcp.CallToolParams{Name: "record", Arguments: map[string]any{"file": file, "then": "fail"}}, true},
		{"invalid arguments", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": 5}}, true},
		{"an unknown tool", &mcp.CallToolParams{Name: "nope"}, false},
		{"a progress token", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "p"}, Meta: mcp.Meta{"progressToken": "tok"}}, false},
		{"other _meta", &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "m"}, Meta: mcp.Meta{"x": 1}}, false},
	}
	for _, c := range cases {
		c.params.Name = prefix + c.params.Name
	}
	answers := sameOnLane(t, fast, slow, fcs, scs, cases)
	// A server at 2026-07-28 names itself in each result's _meta.
	if modern := strings.Contains(answers[0], "io.modelcontextprotocol/serverInfo"); modern != (version == "latest") {
		t.Fatalf("protocolVersion %q: the upstream answered %s", version, answers[0])
	}
	if slow.srv.FastLane() || !fast.srv.FastLane() {
		t.Errorf("FastLane() = %v with the lane, %v with NoFastLane", fast.srv.FastLane(), slow.srv.FastLane())
	}
	// Only in transparent mode does every call take the lane.
	if slow.srv.LeanCalls() || fast.srv.LeanCalls() != (prefix == "") {
		t.Errorf("LeanCalls() = %v with the lane, %v with NoFastLane, in transparent mode: %v", fast.srv.LeanCalls(), slow.srv.LeanCalls(), prefix == "")
	}
}

// TestFastLaneNotNewest checks that a client of 2026-07-28 (stateless, with
// _meta in every request and multi round-trip calls) goes the usual way.
func TestFastLaneNotNewest(t *testing.T) {
	g := newGateway(t, map[string]def{"f": fixture()}, map[string]any{"toolPrefix": "none"})
	cs, _ := g.connectHTTPAt(t, HTTPOptions{Stateless: true}, nil, "2026-07-28")
	if r := call(t, cs, "echo", map[string]any{"text": "new"}); text(r) != "new" {
		t.Errorf("echo = %q", text(r))
	}
	if n := g.fastCalls(); n != 0 {
		t.Errorf("fast calls = %d, want 0", n)
	}
}

// TestFastLaneCrash checks that a server that exits mid-call gives the same
// error on the fast lane as without it, and that the next call connects
// again.
func TestFastLaneCrash(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	settings := map[string]any{"toolPrefix": "none"}
	fast := newGateway(t, map[string]def{"f": fixture()}, settings)
	slow := newGateway(t, map[string]def{"f": fixture()}, settings)
	fcs, _ := fast.connectHTTP(t, HTTPOptions{}, nil)
	scs, _ := slow.connectHTTP(t, HTTPOptions{NoFastLane: true}, nil)
	got, exp := call(t, fcs, "crash", nil), call(t, scs, "crash", nil)
	if !got.IsError || text(got) != text(exp) {
		t.Errorf("crash with the fast lane: %q (error %v); without: %q", text(got), got.IsError, text(exp))
	}
	if !strings.Contains(text(got), "fixture crashed on purpose") {
		t.Errorf("crash: %q, want the server's stderr", text(got))
	}
	if r := call(t, fcs, "echo", map[string]any{"text": "again"}); text(r) != "again" {
		t.Errorf("after the crash: %q", text(r))
	}
	if n := fast.fastCalls(); n != 2 {
		t.Errorf("fast calls = %d, want 2", n)
	}
}

// waitFor waits until the file the fixture's record tool writes holds
// want.
// cancelOnLane makes a call of the fixture's record tool (params wraps
// its arguments) that waits once called, cancels it when the server has
// it, and checks that the call fails, that the server hears of the
// cancellation, and that the call took the fast lane.
func cancelOnLane(t *testing.T, g *testGateway, cs *mcp.ClientSession, file string, params func(args map[string]any) *mcp.CallToolParams) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	before := g.fastCalls()
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, params(map[string]any{"file": file, "then": "wait"}))
		errc <- err
	}()
	waitFor(t, file, "called")
	cancel()
	if err := <-errc; err == nil {
		t.Error("the cancelled call returned no error")
	}
	waitFor(t, file, "cancelled")
	if g.fastCalls() != before+1 {
		t.Errorf("fast calls %d, want %d: the call did not take the lane", g.fastCalls(), before+1)
	}
}

func waitFor(t *testing.T, file, want string) {
	t.Helper()
	<-waitc(file, want)
	if data, _ := os.ReadFile(file); !strings.Contains(string(data), want) {
		t.Fatalf("%s holds %q, never %q", file, data, want)
	}
}

// waitc is closed when file holds want, or after 30 seconds.
func waitc(file, want string) chan struct{} {
	c := make(chan struct{})
	go func() {
		defer close(c)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
			if data, _ := os.ReadFile(file); strings.Contains(string(data), want) {
				return
			}
			time.Sleep(10 * time.Millisecond) // polling a file the child writes: there is no event to wait on
		}
	}()
	return c
}

// TestFastLaneCancel cancels calls on the fast lane, by the client's
// notifications/cancelled and by a dropped connection, and checks that the
// server hears of it each time.
func TestFastLaneCancel(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"f": fixture()}, map[string]any{"toolPrefix": "none"})
	cs, url := g.connectHTTP(t, HTTPOptions{}, nil)

	t.Run("notifications/cancelled", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "calls")
		cancelOnLane(t, g, cs, file, func(args map[string]any) *mcp.CallToolParams {
			return &mcp.CallToolParams{Name: "record", Arguments: args}
		})
	})

	t.Run("dropped connection", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "calls")
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 77, "method": "tools/call",
			"params": map[string]any{"name": "record", "arguments": map[string]any{"file": file, "then": "wait"}}})
		ctx, cancel := context.WithCancel(t.Context())
		req := laneRequest(ctx, url, cs.ID(), string(body))
		errc := make(chan error, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				err = fmt.Errorf("answered %d: %s", resp.StatusCode, data)
			}
			errc <- err
		}()
		select {
		case err := <-errc:
			t.Fatalf("the call ended before it was cancelled: %v", err)
		case <-waitc(file, "called"):
		}
		cancel()
		<-errc
		waitFor(t, file, "cancelled")
	})
	if r := call(t, cs, "echo", map[string]any{"text": "still here"}); text(r) != "still here" {
		t.Errorf("after cancelled calls: %q", text(r))
	}
}

// TestFastLaneAnswer checks the answer on the wire: one JSON-RPC response
// as application/json, the result as the server wrote it, the request's
// id as the client wrote it.
func TestFastLaneAnswer(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"f": fixture()}, map[string]any{"toolPrefix": "none"})
	cs, url := g.connectHTTP(t, HTTPOptions{}, nil)
	sg := newGateway(t, map[string]def{"f": fixture()}, map[string]any{"toolPrefix": "none"})
	_, surl := sg.connectHTTP(t, HTTPOptions{Stateless: true}, nil)
	for _, id := range []string{`7`, `"req-7"`, `-3`, `8 stateless`} {
		g, url, session := g, url, cs.ID()
		if rest, ok := strings.CutSuffix(id, " stateless"); ok {
			g, url, session, id = sg, surl, "", rest
		}
		body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"arguments":{"text":"hi"},"name":"echo"}}`
		before := g.fastCalls()
		resp, err := http.DefaultClient.Do(laneRequest(t.Context(), url, session, body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "application/json" {
			t.Fatalf("id %s: %d %s %s", id, resp.StatusCode, ct, data)
		}
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(data, &msg); err != nil || msg.JSONRPC != "2.0" || string(msg.ID) != id {
			t.Errorf("id %s: answer %s (%v)", id, data, err)
		}
		var res mcp.CallToolResult
		if err := json.Unmarshal(msg.Result, &res); err != nil || text(&res) != "hi" {
			t.Errorf("id %s: result %s (%v)", id, msg.Result, err)
		}
		if g.fastCalls() != before+1 {
			t.Errorf("id %s: not on the fast lane", id)
		}
	}
}

// TestFastLaneSessionTimeout checks that the lane hands a session's request
// to go-sdk when go-sdk has not seen one for so long that its idle timer
// could end the session under a call.
func TestFastLaneSessionTimeout(t *testing.T) {
	g := newGateway(t, map[string]def{"f": fixture()}, map[string]any{"toolPrefix": "none"})
	cs, _ := g.connectHTTP(t, HTTPOptions{}, nil)
	l := g.srv.lane.Load()
	call(t, cs, "echo", map[string]any{"text": "a"})
	if g.fastCalls() != 1 {
		t.Fatalf("fast calls = %d, want 1", g.fastCalls())
	}
	l.mu.Lock()
	ls := l.sessions[cs.ID()]
	ls.seen = ls.seen.Add(-(sessionTimeout - l.call - 30*time.Second))
	l.mu.Unlock()
	call(t, cs, "echo", map[string]any{"text": "b"})
	if g.fastCalls() != 1 {
		t.Errorf("a call near go-sdk's idle timeout took the lane")
	}
	call(t, cs, "echo", map[string]any{"text": "c"})
	if g.fastCalls() != 2 {
		t.Errorf("after go-sdk saw a request, fast calls = %d, want 2", g.fastCalls())
	}
}

func TestScanCall(t *testing.T) {
	for _, c := range []struct {
		body string
		ok   bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}`, true},
		{` { "params" : { "name" : "echo" } , "method":"tools/call", "id":"x", "jsonrpc":"2.0" } `, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":[]}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e\u0063ho"}}`, false},
		{`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"echo"}}`, false},
		{`{"jsonrpc":"2.0","id":01,"method":"tools/call","params":{"name":"echo"}}`, false},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"echo"}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, false},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}]`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"},"extra":1}`, false},
	} {
		_, ok := scanCall([]byte(c.body))
		if ok != c.ok {
			t.Errorf("scanCall(%s) = %v, want %v", c.body, ok, c.ok)
		}
	}
	// go-sdk refuses a message nested deeper than 1000, counting the
	// message itself; the lane leaves it to go-sdk.
	nested := func(n int) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":` +
			strings.Repeat("[", n) + strings.Repeat("]", n) + `}}}`)
	}
	if _, ok := scanCall(nested(997)); !ok {
		t.Error("scanCall refused arguments nested 1000 deep, the message counted")
	}
	if _, ok := scanCall(nested(998)); ok {
		t.Error("scanCall took arguments nested 1001 deep, the message counted")
	}
	c, ok := scanCall([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r-1","reason":"x"}}`))
	if !ok || string(c.cancels) != `"r-1"` {
		t.Errorf("a cancellation: %+v %v", c, ok)
	}
}

// FuzzScanCall checks scanCall against go-sdk's decoder: a body it takes as
// a call is one go-sdk decodes to a tools/call request with the same id,
// name and arguments, and no _meta.
func FuzzScanCall(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":1}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, ok := scanCall(body)
		if !ok || c.cancels != nil || !json.Valid(body) || !utf8.Valid(body) {
			return
		}
		msg, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			t.Fatalf("took %s, which go-sdk refuses: %v", body, err)
		}
		req, isReq := msg.(*jsonrpc.Request)
		if !isReq || req.Method != "tools/call" || !req.IsCall() {
			t.Fatalf("took %s, which go-sdk reads as %#v", body, msg)
		}
		var id any
		if err := json.Unmarshal(c.id, &id); err != nil {
			t.Fatal(err)
		}
		if want, err := jsonrpc.MakeID(id); err != nil || want != req.ID {
			t.Fatalf("%s: id %s, go-sdk's %v", body, c.id, req.ID)
		}
		var p mcp.CallToolParamsRaw
		if err := json.Unmarshal(req.Params, &p); err != nil {
			t.Fatalf("took %s, whose params go-sdk refuses: %v", body, err)
		}
		if p.Name != c.name || p.Meta != nil || !bytes.Equal(p.Arguments, c.args) {
			t.Fatalf("%s: name %q args %s; go-sdk: %q %s meta %v", body, c.name, c.args, p.Name, p.Arguments, p.Meta)
		}
	})
}

// laneRequest is a POST of body to the gateway at url as a client of
// 2025-11-25 in session sid ("" for none).
func laneRequest(ctx context.Context, url, sid, body string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	return req
}

// lanePost posts body to the gateway at url as a client of 2025-11-25 in
// session sid ("" for none) and returns the response's content type and
// body.
func lanePost(t *testing.T, url, sid, body string) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(laneRequest(t.Context(), url, sid, body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, string(data)
}

// TestFastLaneServerToClient checks what a server sends the client during
// a call on the fast lane: a log message reaches the caller on the call's
// own response (which turns into an event stream), and a call of a client
// that can be asked (sampling, elicitation) but has no standalone stream
// open goes the usual way, where the server's request goes on the call's
// own response stream (the gateway relates it to the client's call), and
// the client's answer reaches the server.
func TestFastLaneServerToClient(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	upstream := def{"command": mcptest.ConformanceStdio(t), "protocolVersion": "2025-11-25"}
	for _, stateless := range []bool{false, true} {
		g := newGateway(t, map[string]def{"c": upstream}, map[string]any{"toolPrefix": "none"})
		url := g.serveHTTP(t, HTTPOptions{Stateless: stateless}).URL + "/mcp"
		sid := ""
		if !stateless {
			resp, _ := lanePost(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
			sid = resp.Header.Get("Mcp-Session-Id")
			lanePost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		}
		// The level is passed on to the server, whose messages go to the
		// client whose call is in flight.
		lanePost(t, url, sid, `{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"debug"}}`)
		resp, out := lanePost(t, url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_tool_with_logging","arguments":{}}}`)
		if g.fastCalls() != 1 {
			t.Errorf("stateless=%v: the logging call did not take the lane", stateless)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || strings.Count(out, `"method":"notifications/message"`) == 0 || !strings.Contains(out, `"id":2,"result"`) {
			t.Errorf("stateless=%v: the logging call answered %s:\n%s", stateless, ct, out)
		}
	}

	g := newGateway(t, map[string]def{"c": upstream}, map[string]any{"toolPrefix": "none"})
	url := g.serveHTTP(t, HTTPOptions{}).URL + "/mcp"
	resp, _ := lanePost(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"x","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	lanePost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// The server's request comes on the call's own response stream (the
	// client opened no other), and the client's answer goes back into the
	// call.
	resp, err := http.DefaultClient.Do(laneRequest(t.Context(), url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"hi"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var seen strings.Builder
	asked, answered := false, false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		seen.WriteString(line + "\n")
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal([]byte(line), &msg)
		switch {
		case msg.Method == "elicitation/create":
			asked = true
			r, _ := lanePost(t, url, sid, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"action":"decline"}}`)
			if r.StatusCode/100 != 2 {
				t.Errorf("the answer to the elicitation: %s", r.Status)
			}
		case string(msg.ID) == "2":
			answered = true
		}
		if answered {
			break
		}
	}
	if !asked || !answered {
		t.Errorf("a client that can be asked, without a standalone stream: asked %v, answered %v, on the call's stream:\n%s", asked, answered, seen.String())
	}
	if g.fastCalls() != 0 {
		t.Errorf("a client that can be asked, without a standalone stream: the call took the lane")
	}
}
