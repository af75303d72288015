//go:build unix

package front

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// slowBodyRefused waits until a body sent to ts that never ends has been
// refused: the body deadline has passed for every request that began
// before.
func slowBodyRefused(t *testing.T, ts *httptest.Server) {
	t.Helper()
	c := rawDial(t, ts)
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 10\r\n\r\n{", ts.Listener.Addr())
	if resp, _ := answered(t, c); resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("a slow body: got %d, want 408", resp.StatusCode)
	}
}

// TestHTTPStreamsOutliveBodyDeadline holds that the body deadline bounds
// request bodies, not responses: a call's response stream, and a session's
// standalone event stream (a GET), stay open after it has passed.
func TestHTTPStreamsOutliveBodyDeadline(t *testing.T) {
	path, args, env := testserver.Command(testserver.Gated)
	g := newGateway(t, map[string]def{"f": {"command": path, "args": args, "env": env}}, map[string]any{"toolPrefix": "none"})
	ts := g.serveHTTP(t, HTTPOptions{BodyTimeout: 50 * time.Millisecond})
	changed := make(chan struct{}, 1)
	progressed := make(chan struct{}, 1)
	signal := func(ch chan struct{}) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { signal(changed) },
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { signal(progressed) },
	}).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	fifo := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A call that waits at the gate, having reported progress on its
	// response stream, until the deadline has passed.
	done := make(chan error, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "gate", Arguments: map[string]any{"fifo": fifo}}
		params.SetProgressToken("p")
		res, err := cs.CallTool(t.Context(), params)
		if err == nil && res.IsError {
			err = fmt.Errorf("the call failed: %v", res.Content)
		}
		done <- err
	}()
	<-progressed
	slowBodyRefused(t, ts)
	if err := os.WriteFile(fifo, nil, 0o600); err != nil { // opens the gate
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("a call whose response outlived the body deadline: %v", err)
	}
	// The standalone stream carries what the server sends outside calls.
	g.srv.MCP().AddTool(&mcp.Tool{Name: "late", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	select {
	case <-changed:
	case <-t.Context().Done():
		t.Fatal("the standalone stream did not carry tools/list_changed past the body deadline")
	}
}

// TestProgressOnTheCallsStream: a server's progress notification for a
// client's call goes on that call's response stream, as go-sdk sends what
// relates to a request, not on the session's standalone stream, which a
// client opens when it likes, if at all (this one never does; the
// conformance suite's opened it after the first notification, once in a
// while, and missed that one).
func TestProgressOnTheCallsStream(t *testing.T) {
	path, args, env := testserver.Command(testserver.Gated)
	g := newGateway(t, map[string]def{"f": {"command": path, "args": args, "env": env}}, map[string]any{"toolPrefix": "none"})
	ts := g.serveHTTP(t, HTTPOptions{})
	post := func(session, body string) *http.Response {
		t.Helper()
		resp, err := http.DefaultClient.Do(laneRequest(t.Context(), ts.URL+"/mcp", session, body))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if session == "" {
		t.Fatalf("initialize: %s, no session", resp.Status)
	}
	resp = post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()

	fifo := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
		"params": map[string]any{"name": "gate", "arguments": map[string]any{"fifo": fifo}, "_meta": map[string]any{"progressToken": "p"}}})
	resp = post(session, string(call))
	defer resp.Body.Close()
	// The call waits at the gate until the progress has come on its
	// stream; the bound only ends a test that would hang.
	events := make(chan string)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
	}()
	next := func(what string) string {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the call's stream ended before %s", what)
			}
			return ev
		case <-time.After(time.Minute):
			t.Fatalf("no %s on the call's stream in a minute", what)
		}
		return ""
	}
	if ev := next("progress"); !strings.Contains(ev, `"notifications/progress"`) || !strings.Contains(ev, `"progressToken":"p"`) {
		t.Fatalf("the call's stream began with %s, not its progress under the client's token", ev)
	}
	if err := os.WriteFile(fifo, nil, 0o600); err != nil { // opens the gate
		t.Fatal(err)
	}
	if ev := next("result"); !strings.Contains(ev, "through the gate") {
		t.Fatalf("the call's stream went on with %s, not its result", ev)
	}
}

// TestProgressOnlyFromTheCallsServer: a hostile server that sends
// progress under the gateway's tokens of calls made to another server
// (they are numbered, and easily guessed) reaches no other session: a
// call's progress is passed on only from the server it reached.
func TestProgressOnlyFromTheCallsServer(t *testing.T) {
	path, args, env := testserver.Command(testserver.Gated)
	g := newGateway(t, map[string]def{"a": {"command": path, "args": args, "env": env}, "b": {"command": path, "args": args, "env": env}},
		map[string]any{"toolPrefix": "server"})
	ts := g.serveHTTP(t, HTTPOptions{})
	var mu sync.Mutex
	var heard []string
	progressed := make(chan struct{}, 16)
	connect := func(onProgress func(context.Context, *mcp.ProgressNotificationClientRequest)) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{ProgressNotificationHandler: onProgress}).
			Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	victim := connect(func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		heard = append(heard, req.Params.Message)
		mu.Unlock()
		progressed <- struct{}{}
	})
	attacker := connect(nil)
	fifo := filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"tool": "gate", "server": "b", "args": map[string]any{"fifo": fifo}}}
		params.SetProgressToken("p")
		res, err := victim.CallTool(t.Context(), params)
		if err == nil && res.IsError {
			err = fmt.Errorf("the call failed: %v", res.Content)
		}
		done <- err
	}()
	<-progressed // the gate's own progress: the victim's call is in flight
	var tokens []string
	for i := range 16 {
		tokens = append(tokens, fmt.Sprintf("sb-%d", i))
	}
	// Answered once what server a sent during the call has been handled.
	res, err := attacker.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"tool": "progress-as", "server": "a", "args": map[string]any{"tokens": tokens}}})
	if err != nil || res.IsError {
		t.Fatalf("the forger's call: %v %v", err, res)
	}
	if err := os.WriteFile(fifo, nil, 0o600); err != nil { // opens the gate
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(heard, []string{"waiting at the gate"}) {
		t.Fatalf("the victim heard %q; want only its own server's progress", heard)
	}
}
