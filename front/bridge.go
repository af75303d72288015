package front

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/gateway"
)

// bridge carries what upstream servers send toward a client back to the
// client session whose call caused it: progress notifications (matched by
// progress token, rewritten so two sessions cannot collide), sampling and
// elicitation requests and logging messages (sent to the session with the
// most recent call in flight). A request the client did not declare the
// capability for is refused with an error saying so.
//
// New makes the bridge, and the engine with the bridge's client options,
// so the two cannot be mis-wired. The zero value is not usable.
type bridge struct {
	mu       sync.Mutex
	next     int
	inflight []*route           // calls in flight, oldest first
	tokens   map[string]*route  // upstream progress token → route
	recent   *mcp.ServerSession // the session of the call that began last
	servers  []*mcp.Server      // told of resource updates

	suspended map[string]*suspended // calls of multi round-trip clients, by requestState
	replica   string                // this replica's id, in each requestState
	changed   func()                // told when a suspended call is forgotten (Server.Drain)
}

// route is one call in flight from a client session.
type route struct {
	ss    *mcp.ServerSession
	token any        // the client's progress token, if it gave one
	susp  *suspended // set for a multi round-trip client's call
	// sink, set for a call on the fast lane, sends a notification to the
	// client on the call's own response, as go-sdk would have, and reports
	// false once the call has been answered.
	sink func(method string, params any) bool
}

// newBridge returns an empty bridge.
func newBridge() *bridge { return &bridge{tokens: map[string]*route{}} }

// clientOptions returns the go-sdk client options that route upstream
// traffic through the bridge: the engine's Options.Client.
func (b *bridge) clientOptions() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		CreateMessageHandler:        b.createMessage,
		ElicitationHandler:          b.elicit,
		ProgressNotificationHandler: b.progress,
		LoggingMessageHandler:       b.logging,
		ResourceUpdatedHandler:      b.updated,
	}
}

// clientMiddleware returns receiving middleware for the go-sdk client of
// every upstream connection, in the engine's Options.ClientMiddleware.
// It passes elicitation requests on as they came: the go-sdk client would
// first check the requested schema, more strictly than some servers and
// clients do, and refuse what the client would have shown. The client
// that answers checks the schema (and go-sdk's server session checks the
// answer against it).
func (b *bridge) clientMiddleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.ElicitRequest); ok && method == "elicitation/create" && b != nil {
				res, err := b.elicit(ctx, r)
				if err != nil {
					return nil, err
				}
				return res, nil
			}
			return next(ctx, method, req)
		}
	}
}

// attach makes srv hear of updates to resources its clients subscribed to.
func (b *bridge) attach(srv *mcp.Server) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.servers = append(b.servers, srv)
}

// updated passes a resource update on; each server sends it to the client
// sessions that subscribed to the resource.
func (b *bridge) updated(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
	b.mu.Lock()
	servers := slices.Clone(b.servers)
	b.mu.Unlock()
	for _, srv := range servers {
		srv.ResourceUpdated(ctx, req.Params)
	}
}

// enter records a call from a client session. It returns the context to
// make the upstream call with (carrying a progress token of the bridge's
// own when the client gave one) and a function to call when the call ends.
func (b *bridge) enter(ctx context.Context, ss *mcp.ServerSession, token any) (context.Context, string, func()) {
	if b == nil || ss == nil {
		return ctx, "", func() {}
	}
	return b.enterRoute(ctx, &route{ss: ss, token: token})
}

// enterLane is enter for a call on the fast lane, which go-sdk never saw:
// notifications during it go to sink, and requests to ss (nil when
// stateless: the client declared nothing, and cannot be asked).
func (b *bridge) enterLane(ctx context.Context, ss *mcp.ServerSession, sink func(method string, params any) bool) (context.Context, string, func()) {
	if b == nil {
		return ctx, "", func() {}
	}
	return b.enterRoute(ctx, &route{ss: ss, sink: sink})
}

func (b *bridge) enterRoute(ctx context.Context, r *route) (context.Context, string, func()) {
	ss, token := r.ss, r.token
	r.susp, _ = ctx.Value(suspendedKey{}).(*suspended)
	b.mu.Lock()
	b.inflight = append(b.inflight, r)
	if ss != nil {
		b.recent = ss
	}
	var up string
	if token != nil {
		b.next++
		up = "sb-" + strconv.Itoa(b.next)
		b.tokens[up] = r
	}
	b.mu.Unlock()
	if up != "" {
		ctx = gateway.WithProgressToken(ctx, up)
	}
	return ctx, up, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		for i, x := range b.inflight {
			if x == r {
				b.inflight = append(b.inflight[:i], b.inflight[i+1:]...)
				break
			}
		}
		if up != "" {
			delete(b.tokens, up)
		}
	}
}

// current returns the most recent call in flight whose client passes ok,
// or nil, and whether any call was in flight. A multi round-trip client's
// call always passes: its client declares what it can per request.
func (b *bridge) current(ok func(*mcp.ClientCapabilities) bool) (*route, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	any := false
	for i := len(b.inflight) - 1; i >= 0; i-- {
		r := b.inflight[i]
		any = true
		if r.susp != nil {
			return r, true
		}
		if r.ss == nil {
			if r.sink != nil && ok(&mcp.ClientCapabilities{}) {
				return r, true // a stateless call on the fast lane; for log messages
			}
			continue
		}
		if p := r.ss.InitializeParams(); p != nil && p.Capabilities != nil && ok(p.Capabilities) {
			return r, true
		}
	}
	return nil, any
}

var errNoClient = errors.New("no client call is in flight to pass this request to")

func (b *bridge) createMessage(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	r, any := b.current(func(c *mcp.ClientCapabilities) bool { return c.Sampling != nil })
	if r == nil {
		return nil, refusal("sampling", any)
	}
	if r.susp != nil {
		resp, err := r.susp.askClient(ctx, b.inputID(), req.Params)
		if err != nil {
			return nil, err
		}
		switch res := resp.(type) {
		case *mcp.CreateMessageResult:
			return res, nil
		case *mcp.CreateMessageWithToolsResult:
			// The wire form of a sampling answer decodes as the richer
			// type; a plain sampling request has one content block.
			if len(res.Content) == 1 {
				return &mcp.CreateMessageResult{Meta: res.Meta, Content: res.Content[0], Model: res.Model, Role: res.Role, StopReason: res.StopReason}, nil
			}
		}
		return nil, fmt.Errorf("switchboard: the client answered sampling with %T", resp)
	}
	return r.ss.CreateMessage(ctx, req.Params)
}

func (b *bridge) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	r, any := b.current(func(c *mcp.ClientCapabilities) bool { return c.Elicitation != nil })
	if r == nil {
		return nil, refusal("elicitation", any)
	}
	if r.susp != nil {
		resp, err := r.susp.askClient(ctx, b.inputID(), req.Params)
		if err != nil {
			return nil, err
		}
		if res, ok := resp.(*mcp.ElicitResult); ok {
			return res, nil
		}
		return nil, fmt.Errorf("switchboard: the client answered elicitation with %T", resp)
	}
	return r.ss.Elicit(ctx, req.Params)
}

func (b *bridge) inputID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	return "sb-input-" + strconv.Itoa(b.next)
}

func refusal(what string, anyCall bool) error {
	if anyCall {
		return fmt.Errorf("switchboard: the connected client does not support %s", what)
	}
	return fmt.Errorf("switchboard: %s refused: %w", what, errNoClient)
}

// progress passes a progress notification on under the client's own token.
func (b *bridge) progress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	tok, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	b.mu.Lock()
	r := b.tokens[tok]
	b.mu.Unlock()
	if r == nil {
		return
	}
	p := *req.Params
	p.ProgressToken = r.token
	r.ss.NotifyProgress(ctx, &p)
}

// logging passes a log message on to the session with a call in flight,
// else to the session whose call began last: go-sdk may hand a client the
// result of a call before the log messages sent during it.
func (b *bridge) logging(ctx context.Context, req *mcp.LoggingMessageRequest) {
	var ss *mcp.ServerSession
	if r, _ := b.current(func(*mcp.ClientCapabilities) bool { return true }); r != nil {
		if r.sink != nil && r.sink("notifications/message", req.Params) {
			return
		}
		ss = r.ss // answered already: as after any call
	} else {
		b.mu.Lock()
		ss = b.recent
		b.mu.Unlock()
	}
	if ss != nil {
		ss.Log(ctx, req.Params)
	}
}
