package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
)

// Protocol negotiation.
//
// go-sdk v1.8.0's Client.Connect (mcp/client.go) sends the SEP-2575
// "server/discover" request first when the requested version is 2026-07-28 or
// later (the default), and falls back to "initialize" with 2025-11-25 on any
// error response. ClientSessionOptions.ProtocolVersion set to an older
// revision skips the probe. Older servers answer the probe with "method not
// found" and are fine; but a stdio server that exits on an unknown method
// makes Connect fail, and one that never answers it makes Connect hang until
// its context ends.
//
// protocolVersion "latest" therefore probes, bounded: over stdio, probeConn
// answers the probe itself with "method not found" when the server has
// shown it is running (it answered a ping sent right after the probe) but
// has not answered the probe within ProbeTimeout, or when it has said
// nothing at all for half the request timeout; the SDK then goes on to
// initialize on the same connection. A late success is kept: if that
// initialize fails, the server is connected again with the modern version
// pinned, so a slow start never makes a server fail. Over HTTP the probe's
// POST gets ProbeTimeout (see httpTransport). If the child dies during the
// probe, the server is connected again with the version pinned to
// 2025-11-25, and stays pinned for later connections. "legacy" pins
// 2025-11-25; an exact revision pins that revision.
//
// "auto", the default, is "latest" over HTTP and in process, and "legacy"
// over stdio. Over a pipe, where the gateway is the server's one client,
// 2026-07-28 brings nothing (its point is requests that stand alone, for
// servers behind load balancers) and costs three things:
//   - every request carries the client's info and capabilities in _meta,
//     which the server checks: measured against mcp-proxy in the same
//     runs, the gateway's added latency went from 1.00 to 1.31 times
//     mcp-proxy's, and its calls a second at 50 clients from 1.03 to 0.79
//     times (docs/bench.md);
//   - servers written for the revisions every client speaks send the
//     client requests in the middle of a call (elicitation, sampling),
//     which 2026-07-28 forbids: go-sdk v1.8 servers refuse them at that
//     revision (5 of the official conformance scenarios fail), while at
//     2025-11-25 they serve both styles (go-sdk turns a handler's input
//     requests into requests to the client);
//   - the probe: one more round trip at each start, and a server that
//     mishandles it costs a grace period or a restart.
//
// A stdio server that answers initialize with an error (one that speaks
// only 2026-07-28) is connected again with the probe, and probed from then
// on (server.modern).

// legacyVersion is what "legacy" pins, what "auto" is over stdio, and
// what "latest" falls back to.
const legacyVersion = "2025-11-25"

const (
	methodDiscover   = "server/discover"
	methodInitialize = "initialize"
)

// pinnedVersion returns the version to request for a server's
// protocolVersion setting, "" meaning the SDK's default (which probes).
// fellBack: the server died on the probe once; modern: it refused the
// 2025-11-25 handshake once ("auto" over stdio).
func pinnedVersion(setting string, typ config.Transport, fellBack, modern bool) (string, error) {
	switch setting {
	case "", "auto":
		if (typ == config.TransportStdio || typ == config.TransportSocket) && !modern {
			return legacyVersion, nil
		}
		fallthrough
	case "latest":
		if fellBack {
			return legacyVersion, nil
		}
		return "", nil
	case "legacy":
		return legacyVersion, nil
	}
	if !slices.Contains(mcp.SupportedProtocolVersions(), setting) {
		return "", withClass(ClassConfig, fmt.Errorf("protocolVersion %q is not supported (supported: auto, latest, legacy, %v)", setting, mcp.SupportedProtocolVersions()))
	}
	return setting, nil
}

// retryRefused is what server.open says to retry with when a stdio server
// refused the handshake without a probe: connect then decides.
const retryRefused = "refused"

// refusedHandshake reports whether a connection failed because the server
// answered initialize with an error, as one that speaks only 2026-07-28
// does: not because it died or said nothing.
func refusedHandshake(err error) bool {
	var wire *jsonrpc.Error
	return errors.As(err, &wire)
}

// modernVersion is the newest revision go-sdk speaks: what a server that
// answered the probe late is connected with.
func modernVersion() string {
	return slices.Max(mcp.SupportedProtocolVersions())
}

// A probeConn watches the start of a stdio connection in auto mode: it bounds
// the server/discover probe, records whether the server died during it, and
// notes a late answer.
//
// Time alone cannot tell a server that ignores the probe from one that is
// still starting (a cold npx, a large catalog): both say nothing. So right
// after the probe, probeConn sends a ping of its own (allowed before
// initialization, and answered by old and new servers alike) and starts the
// grace timer only when the server first says anything: the answer to that
// ping, or any other message. A server that started and says nothing about
// the probe within the grace period ignores it. A server that shows no sign
// of life at all is given the backstop (half the request timeout) before the
// probe is answered locally. If the real answer still comes, and it is a
// success, lateModern records it, and the caller connects again with the
// modern version pinned should the fallback initialize fail.
type probeConn struct {
	mcp.Connection
	grace    time.Duration // after the server's first message
	backstop time.Duration // with no message at all

	timedOut    atomic.Bool // the probe was answered by us: drop the server's late answer
	passThrough atomic.Bool // negotiation is over and nothing needs dropping
	fire        context.Context
	doFire      context.CancelFunc

	mu         sync.Mutex
	probeID    jsonrpc.ID
	probing    bool // a probe is outstanding
	pinging    bool // our ping awaits its answer
	alive      bool // the server has sent a message since the probe
	injected   bool // our answer has been returned by Read
	initSent   bool
	over       bool // initialize or the probe has been answered
	lateModern bool // the server answered the probe with a success after we had
	timer      *time.Timer
}

// probePingID is the ID of probeConn's own ping; go-sdk's IDs are numbers.
var probePingID, _ = jsonrpc.MakeID("switchboard-probe-ping")

func newProbeConn(c mcp.Connection, grace, backstop time.Duration) *probeConn {
	fire, doFire := context.WithCancel(context.Background())
	return &probeConn{Connection: c, grace: grace, backstop: max(grace, backstop), fire: fire, doFire: doFire}
}

func (c *probeConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	ping := false
	if req, ok := msg.(*jsonrpc.Request); ok {
		c.mu.Lock()
		switch {
		case c.over:
		case req.Method == methodDiscover && !c.timedOut.Load():
			c.probeID, c.probing = req.ID, true
			c.armLocked(c.backstop)
			ping = !c.pinging && !c.alive
		case req.Method == methodInitialize:
			c.initSent = true
		}
		c.mu.Unlock()
	}
	if err := c.Connection.Write(ctx, msg); err != nil || !ping {
		return err
	}
	// A server that exits on the probe fails this write: that is seen on
	// the read side, and the probe's own write went through.
	if c.Connection.Write(ctx, &jsonrpc.Request{ID: probePingID, Method: "ping", Params: json.RawMessage("{}")}) == nil {
		c.mu.Lock()
		c.pinging = true
		c.mu.Unlock()
	}
	return nil
}

// armLocked (re)starts the timer that answers the probe after d.
func (c *probeConn) armLocked(d time.Duration) {
	if c.timer != nil {
		c.timer.Stop()
	}
	c.timer = time.AfterFunc(d, c.expire)
}

// expire answers the outstanding probe.
func (c *probeConn) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.probing {
		c.timedOut.Store(true)
		c.doFire()
	}
}

func (c *probeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if c.passThrough.Load() {
			return c.Connection.Read(ctx)
		}
		if resp := c.injection(); resp != nil {
			return resp, nil
		}
		msg, err := c.readOrFire(ctx)
		if err == errFired {
			continue // interrupted to return our answer
		}
		if err != nil || !c.observe(msg) {
			return msg, err
		}
	}
}

var errFired = fmt.Errorf("probe timed out")

// readOrFire reads the next message, interrupted when the probe times out.
func (c *probeConn) readOrFire(ctx context.Context) (jsonrpc.Message, error) {
	// The SDK reads before it writes the probe: every read is interruptible
	// until our answer has been given.
	c.mu.Lock()
	armed := !c.injected
	c.mu.Unlock()
	if !armed {
		return c.Connection.Read(ctx)
	}
	rctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.fire, cancel)
	msg, err := c.Connection.Read(rctx)
	stop()
	cancel()
	if err != nil && ctx.Err() == nil && c.fire.Err() != nil {
		return nil, errFired
	}
	return msg, err
}

// injection returns our answer to a probe that timed out, once.
func (c *probeConn) injection() jsonrpc.Message {
	if !c.timedOut.Load() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.injected || !c.probing {
		return nil
	}
	c.injected, c.probing = true, false
	waited := c.grace
	if !c.alive {
		waited = c.backstop
	}
	return &jsonrpc.Response{ID: c.probeID, Error: &jsonrpc.Error{
		Code:    jsonrpc.CodeMethodNotFound,
		Message: fmt.Sprintf("no answer to %s within %s", methodDiscover, fmtDuration(waited)),
	}}
}

// observe notes the server's messages during negotiation and reports whether
// msg must be dropped: the answer to our ping, or a late answer to a probe we
// answered already.
func (c *probeConn) observe(msg jsonrpc.Message) (drop bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.probing && !c.alive {
		// The server is up: from now on, silence about the probe means
		// it ignores it.
		c.alive = true
		c.armLocked(c.grace)
	}
	resp, ok := msg.(*jsonrpc.Response)
	switch {
	case !ok:
	case resp.ID == probePingID:
		c.pinging, drop = false, true
	case resp.ID == c.probeID && c.timedOut.Load():
		c.lateModern, drop = resp.Error == nil, true
	case resp.ID == c.probeID && c.probing:
		c.probing = false
		c.timer.Stop()
		c.over = resp.Error == nil
	case c.initSent:
		c.over = true
	}
	if c.over && !c.timedOut.Load() && !c.pinging {
		c.passThrough.Store(true)
	}
	return drop
}

// diedProbing reports whether the connection ended while the probe was
// outstanding, before initialize was sent: the server could not take it.
func (c *probeConn) diedProbing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.probing && !c.initSent
}

// answeredLate reports whether the server answered the probe with a success
// after we had answered it for the server: it speaks the modern protocol.
func (c *probeConn) answeredLate() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lateModern
}

func (c *probeConn) Close() error {
	c.mu.Lock()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	return c.Connection.Close()
}

// connTransport is a Transport for an existing connection.
type connTransport struct{ conn mcp.Connection }

func (t connTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }
