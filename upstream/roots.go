package upstream

import (
	"slices"
	"sync"

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
