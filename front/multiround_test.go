package front

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestCloseEndsSuspendedCalls: a multi round-trip client's call that is
// suspended, waiting for the client's answer, is cancelled by the
// server's Close, which returns only once the call has ended.
func TestCloseEndsSuspendedCalls(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"everything": everything(t)}, nil)
	asked := make(chan struct{})
	release := make(chan struct{})
	cs := g.connect(t, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			close(asked)
			<-release
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	if v := cs.InitializeResult().ProtocolVersion; v < "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28 or later", v)
	}
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"tool": "trigger-elicitation-request", "server": "everything"}})
		called <- err
	}()
	<-asked // the call is suspended: the client holds the input request

	g.srv.bridge.mu.Lock()
	var sp *suspended
	for _, s := range g.srv.bridge.suspended {
		sp = s
	}
	g.srv.bridge.mu.Unlock()
	if sp == nil {
		t.Fatal("no call is suspended while the client holds its input request")
	}
	if err := g.srv.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-sp.result:
		if !r.IsError {
			t.Errorf("the call Close cancelled ended well: %+v", r)
		}
	default:
		t.Error("Close returned while the suspended call still ran")
	}
	close(release)
	<-called // ends, well or not, now that the client answered
}

// manualRounds returns the options of a multi round-trip client that
// answers input requests itself (go-sdk hands them back to the caller),
// declaring elicitation and sampling with every call as a client that
// shows them does.
func manualRounds() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("answered by the test, not by go-sdk")
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("answered by the test, not by go-sdk")
		},
	}
}

// TestConcurrentContinuations sends the continuation of one suspended call
// many times at once, as a client that retries might: one request takes
// the answer and gets the call's result; each of the others is told that
// another request is continuing the call, at once, and none waits. (The
// continuation read and wrote the call's input request without a lock: the
// race detector catches that here.)
func TestConcurrentContinuations(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	up := newAskServer(t)
	g := newGateway(t, map[string]def{"up": {"url": up.url + "/mcp"}}, nil)
	ts := g.serveHTTP(t, HTTPOptions{Stateless: true})
	// The client answers input requests itself.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, manualRounds()).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	args := map[string]any{"tool": "ask", "server": "up"}
	first := call(t, cs, "mcp", args)
	if first.RequestState == "" || len(first.InputRequests) != 1 {
		t.Fatalf("no input request came back: %+v", first)
	}
	var id string
	for k := range first.InputRequests {
		id = k
	}
	answer := mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}}
	// A continuation that waits for ever fails the test here instead.
	ctx, cancel := context.WithTimeout(t.Context(), failsafe)
	defer cancel()
	const n = 8
	texts := make(chan string, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			<-start
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp", Arguments: args, RequestState: first.RequestState, InputResponses: answer})
			if err != nil {
				texts <- err.Error()
				return
			}
			texts <- text(r)
		})
	}
	close(start)
	wg.Wait()
	close(texts)
	var greeted int
	for s := range texts {
		switch {
		case s == "hello Ada":
			greeted++
		case strings.Contains(s, "another request is already continuing"), strings.Contains(s, "unknown or expired requestState"):
		default:
			t.Errorf("a continuation got %q", s)
		}
	}
	if greeted != 1 {
		t.Errorf("%d continuations got the call's result, want 1", greeted)
	}
	if n := up.completed.Load(); n != 1 {
		t.Errorf("the upstream completed %d calls, want 1", n)
	}
}
