//go:build unix

package front

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
