package front

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestDrainFinishesSuspendedCalls: a drain waits for a multi round-trip
// call suspended on the client's answer, refuses a new call with 503
// before anything is done for it, lets the continuation through, and ends
// as soon as the call has completed.
func TestDrainFinishesSuspendedCalls(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	up := newAskServer(t)
	draining := make(chan struct{})
	g := newGatewayWith(t, map[string]def{"up": {"url": up.url + "/mcp"}}, nil, Options{Logger: slog.New(onMessage{"draining: taking no new requests", draining})})
	ts := g.serveHTTP(t, HTTPOptions{Stateless: true})
	manual := manualRounds()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, manual).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	args := map[string]any{"tool": "ask", "server": "up"}
	first := call(t, cs, "mcp", args)
	if first.RequestState == "" || len(first.InputRequests) != 1 {
		t.Fatalf("no input request came back: %+v", first)
	}
	drained := make(chan int, 1)
	go func() { drained <- g.srv.Drain(time.Hour) }()
	select {
	case <-draining:
	case n := <-drained:
		t.Fatalf("the drain ended (%d cancelled) with a call suspended", n)
	}

	resp, err := http.Get(ts.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz while draining: %d %q, want 503", resp.StatusCode, body)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: args}); err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Errorf("a new call while draining: %v, want it refused with 503", err)
	}
	if n := up.began.Load(); n != 1 {
		t.Errorf("the upstream saw %d calls begin, want 1: the refused call must send nothing", n)
	}
	var id string
	for k := range first.InputRequests {
		id = k
	}
	answer := mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}}
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: args, RequestState: first.RequestState, InputResponses: answer})
	if err != nil || r.IsError || text(r) != "hello Ada" {
		t.Fatalf("the continuation while draining: %v %+v, want the call completed", err, r)
	}
	if n := <-drained; n != 0 {
		t.Errorf("the drain cancelled %d, want none: the call completed", n)
	}
}

// onMessage is a log handler that closes a channel at the first record
// whose message is msg.
type onMessage struct {
	msg string
	ch  chan struct{}
}

func (h onMessage) Enabled(context.Context, slog.Level) bool { return true }
func (h onMessage) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h onMessage) WithGroup(string) slog.Handler            { return h }
func (h onMessage) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case <-h.ch:
		default:
			close(h.ch)
		}
	}
	return nil
}

// TestDrainCancelsPastTheBound: a call still running when the drain's
// bound runs out is cancelled upstream (the upstream tool sees its context
// end) and its client gets an error that names the shutdown.
func TestDrainCancelsPastTheBound(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	started, cancelled := make(chan struct{}), make(chan struct{})
	up := mcp.NewServer(&mcp.Implementation{Name: "block", Version: "1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "block", Description: "Blocks until cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			close(started)
			<-ctx.Done()
			close(cancelled)
			return nil, nil, ctx.Err()
		})
	upTS := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(upTS.Close) // after the gateway's, whose connection it holds
	g := newGateway(t, map[string]def{"up": {"url": upTS.URL}}, map[string]any{"toolPrefix": "none"})
	ts := g.serveHTTP(t, HTTPOptions{})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}})
		if err != nil {
			r = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "client error: " + err.Error()}}}
		}
		done <- r
	}()
	<-started
	if n := g.srv.Drain(50 * time.Millisecond); n != 1 {
		t.Errorf("the drain cancelled %d, want the one call", n)
	}
	<-cancelled // the upstream was told
	r := <-done
	for _, want := range []string{"switchboard: the call was cancelled: switchboard is shutting down", "did not finish within the 50ms", "call the tool again"} {
		if !r.IsError || !strings.Contains(text(r), want) {
			t.Errorf("the call past the bound: %q (isError %v), want an error with %q", text(r), r.IsError, want)
		}
	}
}
