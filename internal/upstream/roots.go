package upstream

import (
	"context"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
)

// Roots are the user's decision (config.Roots): a connection offers its
// server the directories the server's configuration lists, and, when the
// configuration accepts them ("client"), the roots of the client the pool
// serves: Options.Roots until SetRoots replaces them. A server whose
// configuration offers nothing is not told that switchboard has roots at
// all: its client does not declare the capability, so that a filesystem
// server keeps the directories of its command line.
//
// Each connection has a go-sdk client of its own, which answers roots/list
// from a list of its own; SetRoots brings the lists of the clients that
// accept the client's roots up to date, and go-sdk then sends their servers
// notifications/roots/list_changed.
type rootsState struct {
	apply sync.Mutex // serializes SetRoots, calls into the clients included

	mu      sync.Mutex
	client  []*mcp.Root // the roots of the client the pool serves
	clients map[*mcp.Client]*offer
}

// An offer is what one connection's client offers its server.
type offer struct {
	own    []*mcp.Root // the configured directories
	client bool        // the client's roots too
	have   []*mcp.Root // what it offers now
}

// want is what o offers when the pool's client has the roots client.
func (o *offer) want(client []*mcp.Root) []*mcp.Root {
	if !o.client {
		return o.own
	}
	return cloneRoots(append(slices.Clone(o.own), client...))
}

// SetRoots replaces the roots of the client the pool serves, now and on
// later connections, and tells each connected server that accepts them
// (config.Roots.Client) and asked for roots that they changed. A gateway
// calls it with the roots of the client its connections serve. It is safe
// for concurrent use; the last call wins.
func (p *Pool) SetRoots(roots []*mcp.Root) {
	r := &p.roots
	r.apply.Lock()
	defer r.apply.Unlock()
	roots = cloneRoots(roots)
	r.mu.Lock()
	r.client = roots
	update := map[*mcp.Client]*offer{}
	for c, o := range r.clients {
		if o.client {
			update[c] = o
		}
	}
	r.mu.Unlock()
	for c, o := range update {
		r.mu.Lock()
		have := o.have
		r.mu.Unlock()
		want := o.want(roots)
		updateRoots(c, have, want)
		r.mu.Lock()
		o.have = want
		r.mu.Unlock()
	}
}

// rootsOf returns what a server's configuration offers it: its
// directories as file: roots, and whether it takes the client's roots;
// nil when it is offered none, and its client then does not declare the
// roots capability.
func rootsOf(cfg *config.Server, log *slog.Logger) *offer {
	if !cfg.Roots.Offers() {
		return nil
	}
	o := &offer{client: cfg.Roots.Client}
	for _, dir := range cfg.Roots.Dirs {
		if !filepath.IsAbs(dir) {
			// config refuses relative entries; "~" with no home
			// directory known is one.
			log.Warn("a root is not an absolute directory here: it is not offered", "root", dir)
			continue
		}
		o.own = append(o.own, &mcp.Root{URI: fileURI(dir), Name: filepath.Base(dir)})
	}
	o.own = cloneRoots(o.own)
	return o
}

// fileURI is the file: URI of an absolute directory: file:///home/me,
// file:///C:/work.
func fileURI(dir string) string {
	p := filepath.ToSlash(filepath.Clean(dir))
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// register gives a new connection's client, not yet connected, what its
// server is offered, and keeps it up to date until forget. A nil offer
// registers nothing.
func (r *rootsState) register(c *mcp.Client, o *offer) {
	if o == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.clients == nil {
		r.clients = map[*mcp.Client]*offer{}
	}
	o.have = o.want(r.client)
	c.AddRoots(o.have...) // no session yet: nobody to notify
	r.clients[c] = o
}

// offers reports whether a connection's client offers its server any
// roots now.
func (r *rootsState) offers(c *mcp.Client) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.clients[c]
	return o != nil && len(o.have) > 0
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
func (s *server) settleRoots(ctx context.Context, client *mcp.Client, cs *mcp.ClientSession, rc *rootsConn) {
	if r := cs.InitializeResult(); r == nil || r.ProtocolVersion >= "2026-07-28" {
		return
	}
	if !s.pool.roots.offers(client) || cs.Ping(ctx, nil) != nil || !rc.asked.Load() {
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
