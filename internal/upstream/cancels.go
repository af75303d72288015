package upstream

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cancelGrace bounds how long closing a session waits for the
// notifications/cancelled that go-sdk sends, after the call has returned, for
// a request whose context ended. A command that exits on Ctrl-C closes its
// sessions at once: without the wait, the server would never learn that the
// call was abandoned.
const cancelGrace = 2 * time.Second

// cancels counts the cancellations a session owes its server and those it
// has written.
type cancels struct {
	mu      sync.Mutex
	owed    int           // requests that ended by their context
	sent    int           // notifications/cancelled written
	changed chan struct{} // has a value after sent grows
}

func newCancels() *cancels { return &cancels{changed: make(chan struct{}, 1)} }

// owe records a request that ended by its context: go-sdk sends its
// cancellation asynchronously.
func (c *cancels) owe() {
	c.mu.Lock()
	c.owed++
	c.mu.Unlock()
}

func (c *cancels) paid() {
	c.mu.Lock()
	c.sent++
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *cancels) settled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent >= c.owed
}

// wait waits until every owed cancellation is written, at most cancelGrace.
func (c *cancels) wait() {
	if c.settled() {
		return
	}
	t := time.NewTimer(cancelGrace)
	defer t.Stop()
	for !c.settled() {
		select {
		case <-c.changed:
		case <-t.C:
			return
		}
	}
}

// A cancelTransport connects through a connection that tells c of each
// notifications/cancelled it writes.
type cancelTransport struct {
	mcp.Transport
	c *cancels
}

func (t cancelTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return cancelConn{conn, t.c}, nil
}

type cancelConn struct {
	mcp.Connection
	c *cancels
}

func (c cancelConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && req.Method == "notifications/cancelled" {
		c.c.paid()
	}
	return err
}
