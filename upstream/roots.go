package upstream

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Roots: every connection offers the servers that ask (roots/list) the
// pool's roots, Options.Roots until SetRoots replaces them. Each connection
// has a go-sdk client of its own, which answers roots/list from a list of
// its own; SetRoots brings each list up to date, and go-sdk then sends that
// server notifications/roots/list_changed.
type rootsState struct {
	apply sync.Mutex // serializes SetRoots, calls into the clients included

	mu      sync.Mutex
	roots   []*mcp.Root
	clients map[*mcp.Client][]*mcp.Root // each connection's client → the roots it offers
}

// SetRoots replaces the roots every connection offers, now and later, and
// tells each connected server that asked for roots that they changed. A
// gateway calls it with the roots of the client its connections serve. It
// is safe for concurrent use; the last call wins.
func (p *Pool) SetRoots(roots []*mcp.Root) {
	r := &p.roots
	r.apply.Lock()
	defer r.apply.Unlock()
	roots = cloneRoots(roots)
	r.mu.Lock()
	r.roots = roots
	old := make(map[*mcp.Client][]*mcp.Root, len(r.clients))
	for c, have := range r.clients {
		old[c] = have
	}
	r.mu.Unlock()
	for c, have := range old {
		updateRoots(c, have, roots)
		r.mu.Lock()
		if _, ok := r.clients[c]; ok {
			r.clients[c] = roots
		}
		r.mu.Unlock()
	}
}

// register gives a new connection's client, not yet connected, the
// current roots, and keeps it up to date until forget.
func (r *rootsState) register(c *mcp.Client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clients == nil {
		r.clients = map[*mcp.Client][]*mcp.Root{}
	}
	c.AddRoots(r.roots...) // no session yet: nobody to notify
	r.clients[c] = r.roots
}

// forget stops updating a client whose connection has ended or failed.
func (r *rootsState) forget(c *mcp.Client) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.clients, c)
}

// updateRoots changes a client's roots from have to want. Roots that go
// are removed before roots that come are added, so that a server that
// lists them in between sees fewer, never more, than either list holds.
// Each step that changes something notifies the client's server.
func updateRoots(c *mcp.Client, have, want []*mcp.Root) {
	var gone []string
	for _, h := range have {
		if !slices.ContainsFunc(want, func(w *mcp.Root) bool { return w.URI == h.URI }) {
			gone = append(gone, h.URI)
		}
	}
	var added []*mcp.Root
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h *mcp.Root) bool { return h.URI == w.URI && h.Name == w.Name }) {
			added = append(added, w)
		}
	}
	if len(gone) > 0 {
		c.RemoveRoots(gone...)
	}
	if len(added) > 0 {
		c.AddRoots(added...)
	}
}

// cloneRoots copies roots, leaving out nil ones and later duplicates of a
// URI.
func cloneRoots(roots []*mcp.Root) []*mcp.Root {
	var out []*mcp.Root
	for _, r := range roots {
		if r == nil || slices.ContainsFunc(out, func(o *mcp.Root) bool { return o.URI == r.URI }) {
			continue
		}
		cp := *r
		out = append(out, &cp)
	}
	return out
}

// rootsSettle bounds how long a stdio connection is held back, once
// switchboard has answered the roots/list its server sent as it started,
// before the connection is used. A server may apply roots asynchronously
// after it got them (server-filesystem checks each directory first, file
// system calls that take a few milliseconds, or much longer on a busy
// machine): a call sent at once would find it with none, and a one-shot CLI
// command never sends a second. The wait ends early when the server writes
// to its stderr after the answer, which servers that apply roots do to say
// so (server-filesystem: "Updated allowed directories from MCP roots"); a
// server that says nothing costs the whole bound, once, on a connect where it
// asked for roots.
const rootsSettle = time.Second

// A rootsConn watches a connection for the server's roots/list request and
// for switchboard's answer to it.
type rootsConn struct {
	mcp.Connection
	asked    atomic.Bool
	once     sync.Once
	answered chan struct{} // closed when the answer to the first roots/list is written
	stderr   *ring         // the server's stderr, or nil when it has none

	mu     sync.Mutex
	id     jsonrpc.ID // of the first roots/list request
	errSeq uint64     // how much stderr had been written when the answer was
}

func newRootsConn(c mcp.Connection, stderr *ring) *rootsConn {
	return &rootsConn{Connection: c, answered: make(chan struct{}), stderr: stderr}
}

func (c *rootsConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "roots/list" && !c.asked.Load() {
		c.mu.Lock()
		c.id = req.ID
		c.mu.Unlock()
		c.asked.Store(true)
	}
	return msg, err
}

func (c *rootsConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok && c.asked.Load() {
		c.mu.Lock()
		mine := resp.ID == c.id
		c.mu.Unlock()
		if mine {
			c.once.Do(func() {
				if c.stderr != nil {
					c.mu.Lock()
					c.errSeq = c.stderr.written()
					c.mu.Unlock()
				}
				close(c.answered)
			})
		}
	}
	return err
}

// settleRoots gives a server that asked for the roots as it started (on
// notifications/initialized) until it writes to stderr, at most rootsSettle,
// to apply them. A ping tells: the
// server's messages come in order, so a roots/list it sent on initialized
// has been read by the time the ping is answered. Nothing is waited for
// when there are no roots to apply, or on 2026-07-28, where roots are asked
// for within a request (SEP-2322) and so are applied before its answer.
func (s *server) settleRoots(ctx context.Context, cs *mcp.ClientSession, rc *rootsConn) {
	if r := cs.InitializeResult(); r == nil || r.ProtocolVersion >= "2026-07-28" {
		return
	}
	s.pool.roots.mu.Lock()
	none := len(s.pool.roots.roots) == 0
	s.pool.roots.mu.Unlock()
	if none || cs.Ping(ctx, nil) != nil || !rc.asked.Load() {
		return
	}
	t := time.NewTimer(rootsSettle)
	defer t.Stop()
	select {
	case <-rc.answered:
	case <-ctx.Done():
		return
	}
	rc.mu.Lock()
	since := rc.errSeq
	rc.mu.Unlock()
	for rc.stderr == nil || rc.stderr.written() == since {
		var wrote <-chan struct{}
		if rc.stderr != nil {
			wrote = rc.stderr.wrote
		}
		select {
		case <-wrote:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}
