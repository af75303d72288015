package front

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/mcptest"
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
