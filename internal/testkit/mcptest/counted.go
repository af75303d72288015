package mcptest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Counted is a go-sdk server served over Streamable HTTP in process, which
// counts the messages it receives by method: a test asks it how many
// requests a client really sent.
type Counted struct {
	URL string // the endpoint, for an HTTP server definition

	mu     sync.Mutex
	counts map[string]int
}

// ServeCounted serves s at an httptest server that is closed when the test
// ends, and counts what s receives from then on.
func ServeCounted(t testing.TB, s *mcp.Server) *Counted {
	t.Helper()
	c := &Counted{counts: map[string]int{}}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			c.mu.Lock()
			c.counts[method]++
			c.mu.Unlock()
			return next(ctx, method, req)
		}
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	c.URL = ts.URL
	return c
}

// Count returns how many messages of method the server received so far.
func (c *Counted) Count(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[method]
}
