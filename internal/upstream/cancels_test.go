package upstream_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestCloseSendsCancellation cancels a call and closes the pool at once, as
// the CLI does on Ctrl-C: the server is still told that the call was
// cancelled (go-sdk sends that after the call has returned).
func TestCloseSendsCancellation(t *testing.T) {
	for range 5 { // the race with Close was lost only some of the time
		started := make(chan struct{}, 1)
		s := mcp.NewServer(&mcp.Implementation{Name: "waiter", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "wait", Description: "Waits until cancelled."},
			func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				started <- struct{}{}
				<-ctx.Done()
				return nil, nil, ctx.Err()
			})
		// What the server was told, seen on the wire: go-sdk's server may
		// end the session (the pool's closing DELETE) before it handles a
		// notification it accepted.
		handler, cancelled := mcptest.Told(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil), "notifications/cancelled")
		ts := httptest.NewServer(handler)
		h := newPool(t, []*config.Server{{Name: "w", Type: config.TransportHTTP, URL: ts.URL,
			RequestTimeout: time.Minute, ProtocolVersion: "auto"}}, nil)

		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := h.call(ctx, "w", "wait", nil)
			errc <- err
		}()
		<-started
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled call: %v", err)
		}
		h.Close()
		select {
		case <-cancelled:
		case <-time.After(time.Minute): // generous: not what is tested
			t.Fatal("the server was never sent notifications/cancelled")
		}
		ts.Close()
	}
}
