package upstream

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
// protocolVersion "auto" therefore probes, bounded: over stdio, probeConn
// answers the probe itself with "method not found" once ProbeTimeout passes
// without a response, so the SDK goes on to initialize on the same
// connection (a late answer is dropped); over HTTP the probe's POST gets
// ProbeTimeout (see httpTransport). If the child dies during the probe, the
// server is connected again with the version pinned to 2025-11-25, and stays
// pinned for later connections. "legacy" pins 2025-11-25; an exact revision
// pins that revision.

// legacyVersion is what "legacy" pins and what "auto" falls back to.
const legacyVersion = "2025-11-25"

const (
	methodDiscover   = "server/discover"
	methodInitialize = "initialize"
)

// pinnedVersion returns the version to request for a server's
// protocolVersion setting, "" meaning the SDK's default (which probes).
func pinnedVersion(setting string, fellBack bool) (string, error) {
	switch setting {
	case "", "auto":
		if fellBack {
			return legacyVersion, nil
		}
		return "", nil
	case "legacy":
		return legacyVersion, nil
	}
	if !slices.Contains(mcp.SupportedProtocolVersions(), setting) {
		return "", withClass(ClassConfig, fmt.Errorf("protocolVersion %q is not supported (supported: auto, legacy, %v)", setting, mcp.SupportedProtocolVersions()))
	}
	return setting, nil
}

// A probeConn watches the start of a stdio connection in auto mode: it bounds
// the server/discover probe and records whether the server died during it.
type probeConn struct {
	mcp.Connection
	timeout time.Duration

	timedOut    atomic.Bool // the probe was answered by us: drop the server's late answer
	passThrough atomic.Bool // negotiation is over and nothing needs dropping
	fire        context.Context
	doFire      context.CancelFunc

	mu       sync.Mutex
	probeID  jsonrpc.ID
	probing  bool // a probe is outstanding
	injected bool // our answer has been returned by Read
	initSent bool
	over     bool // initialize or the probe has been answered
	timer    *time.Timer
}

func newProbeConn(c mcp.Connection, timeout time.Duration) *probeConn {
	fire, doFire := context.WithCancel(context.Background())
	return &probeConn{Connection: c, timeout: timeout, fire: fire, doFire: doFire}
}

func (c *probeConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok {
		c.mu.Lock()
		switch {
		case c.over:
		case req.Method == methodDiscover && !c.timedOut.Load():
			c.probeID, c.probing = req.ID, true
			if c.timer != nil {
				c.timer.Stop()
			}
			c.timer = time.AfterFunc(c.timeout, c.expire)
		case req.Method == methodInitialize:
			c.initSent = true
		}
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
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
	return &jsonrpc.Response{ID: c.probeID, Error: &jsonrpc.Error{
		Code:    jsonrpc.CodeMethodNotFound,
		Message: fmt.Sprintf("no answer to %s within %s", methodDiscover, fmtDuration(c.timeout)),
	}}
}

// observe notes responses to the probe and reports whether msg must be
// dropped (a late answer to a probe we answered already).
func (c *probeConn) observe(msg jsonrpc.Message) (drop bool) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if resp.ID == c.probeID && c.timedOut.Load() {
		return true
	}
	if resp.ID == c.probeID && c.probing {
		c.probing = false
		if c.timer != nil {
			c.timer.Stop()
		}
		c.over = resp.Error == nil
	} else if c.initSent {
		c.over = true
	}
	if c.over && !c.timedOut.Load() {
		c.passThrough.Store(true)
	}
	return false
}

// diedProbing reports whether the connection ended while the probe was
// outstanding, before initialize was sent: the server could not take it.
func (c *probeConn) diedProbing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.probing && !c.initSent
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
