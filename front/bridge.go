package front

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/identity"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// bridge carries what upstream servers send toward a client back to the
// client session whose call caused it. Every client session shares the
// engine's one connection per server, so what a server sends must be tied
// to a call: progress notifications by progress token (rewritten so two
// sessions cannot collide); sampling and elicitation requests, login URLs
// and log messages by the server they come from (upstream.ServerOf) and
// the calls in flight that reached that server (upstream.OnReach).
//
// A server's request goes only to the client session whose call to that
// server is in flight; several calls of one session to it are one
// candidate. With no such call, or calls of two sessions or more, it is
// refused with an error to the server saying why, and so is a request the
// client did not declare the capability for. What reaches the person
// names the server that asks (label). A log message goes to the one
// session with a call to the server in flight, else to the session whose
// call to it ended last; with two sessions in flight it goes to neither.
//
// New makes the bridge, and the engine with the bridge's client options,
// so the two cannot be mis-wired. The zero value is not usable.
type bridge struct {
	log *slog.Logger // refusals are noted here; set by New

	mu       sync.Mutex
	next     int
	inflight []*route                      // calls in flight, oldest first
	tokens   map[string]*route             // upstream progress token → route
	last     map[string]*mcp.ServerSession // server → the session whose call to it ended last
	servers  []*mcp.Server                 // told of resource updates

	suspended map[string]*suspended // calls of multi round-trip clients, by requestState
	replica   string                // this replica's id, in each requestState
	changed   func()                // told when a suspended call is forgotten (Server.Drain)
}

// route is one call in flight from a client session.
type route struct {
	ss *mcp.ServerSession
	// call is the context go-sdk handles the client's call in (nil for a
	// call on the fast lane): a request to the client made in it goes on
	// that call's own response stream, not the client's standalone stream,
	// which may not be open (see toClient).
	call  context.Context
	token any        // the client's progress token, if it gave one
	susp  *suspended // set for a multi round-trip client's call
	// sink, set for a call on the fast lane, sends a notification to the
	// client on the call's own response, as go-sdk would have.
	sink laneSink
	// user is the signed-in user whose call it is (identity), "" for none:
	// what a user's own upstream connection asks (per-user credentials)
	// goes only to that user's calls.
	user string

	// Guarded by bridge.mu.
	reached []string // the servers the call has reached
	left    bool     // the call has ended
}

// reaches reports whether the call has reached server. bridge.mu must be
// held.
func (r *route) reaches(server string) bool { return slices.Contains(r.reached, server) }

// lastKey is the key of bridge.last for a server's connection: the
// server's name, and the user whose own connection it is, if any.
func lastKey(server, user string) string {
	if user == "" {
		return server
	}
	return server + "\x00" + user
}

// owner returns what identifies the route's client session: the session,
// or, for a stateless call on the fast lane (which has none), the call.
func (r *route) owner() any {
	if r.ss != nil {
		return r.ss
	}
	return r
}

// caps returns what the route's client declared it can do: per request
// for a multi round-trip client, else when its session began; nil for
// nothing.
func (r *route) caps() *mcp.ClientCapabilities {
	if r.susp != nil {
		return r.susp.caps
	}
	if p := initParams(r.ss); p != nil {
		return p.Capabilities
	}
	return nil
}

type routeKey struct{}

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
// own when the client gave one, and noting each server the call reaches)
// and a function to call when the call ends, which may be called again.
func (b *bridge) enter(ctx context.Context, ss *mcp.ServerSession, token any) (context.Context, string, func()) {
	if b == nil || ss == nil {
		return ctx, "", func() {}
	}
	return b.enterRoute(ctx, &route{ss: ss, token: token, call: ctx})
}

// toClient returns the context to send a request of the server's (made in
// ctx) to the client of r in: one that ends with either, and that go-sdk
// relates to the client's call where go-sdk handles it, so that the
// request goes on that call's response stream (over HTTP, a server may
// send a request related to a client's request on its stream; one sent
// without waits for the client's standalone stream, which a client opens
// when it likes, if at all). Call stop when the request is answered.
func toClient(ctx context.Context, r *route) (_ context.Context, stop func()) {
	if r.call == nil {
		return ctx, func() {}
	}
	cctx, cancel := context.WithCancel(r.call)
	unhook := context.AfterFunc(ctx, cancel)
	return cctx, func() { unhook(); cancel() }
}

// enterLane is enter for a call on the fast lane, which go-sdk never saw:
// notifications during it go to sink, and requests to ss (nil when
// stateless: the client declared nothing, and cannot be asked).
func (b *bridge) enterLane(ctx context.Context, ss *mcp.ServerSession, sink laneSink) (context.Context, string, func()) {
	if b == nil {
		return ctx, "", func() {}
	}
	return b.enterRoute(ctx, &route{ss: ss, sink: sink})
}

func (b *bridge) enterRoute(ctx context.Context, r *route) (context.Context, string, func()) {
	r.susp, _ = ctx.Value(suspendedKey{}).(*suspended)
	if u := identity.From(ctx); u != nil {
		r.user = u.Subject
	}
	b.mu.Lock()
	b.inflight = append(b.inflight, r)
	var up string
	if r.token != nil {
		b.next++
		up = "sb-" + strconv.Itoa(b.next)
		b.tokens[up] = r
	}
	b.mu.Unlock()
	if up != "" {
		ctx = gateway.WithProgressToken(ctx, up)
	}
	ctx = upstream.OnReach(ctx, func(server string) {
		b.mu.Lock()
		if !r.reaches(server) {
			r.reached = append(r.reached, server)
		}
		b.mu.Unlock()
	})
	ctx = context.WithValue(ctx, routeKey{}, r)
	return ctx, up, func() { b.leave(r, up) }
}

// leave forgets a call that has ended, once.
func (b *bridge) leave(r *route, up string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r.left {
		return
	}
	r.left = true
	for i, x := range b.inflight {
		if x == r {
			b.inflight = append(b.inflight[:i], b.inflight[i+1:]...)
			break
		}
	}
	if up != "" {
		delete(b.tokens, up)
	}
	if r.ss != nil {
		if b.last == nil {
			b.last = map[string]*mcp.ServerSession{}
		}
		for _, server := range r.reached {
			b.last[server] = r.ss
			if r.user != "" {
				b.last[lastKey(server, r.user)] = r.ss
			}
		}
	}
}

// forgetSession forgets a client session that has ended.
func (b *bridge) forgetSession(ss *mcp.ServerSession) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for server, x := range b.last {
		if x == ss {
			delete(b.last, server)
		}
	}
}

// callersLocked returns the newest call in flight that reached server, and
// how many client sessions have such a call; for a user's own connection
// to server (user not ""), only that user's calls count. b.mu must be
// held.
func (b *bridge) callersLocked(server, user string) (newest *route, sessions int) {
	var seen []any
	for i := len(b.inflight) - 1; i >= 0; i-- {
		r := b.inflight[i]
		if !r.reaches(server) || (user != "" && r.user != user) || slices.Contains(seen, r.owner()) {
			continue
		}
		if newest == nil {
			newest = r
		}
		seen = append(seen, r.owner())
	}
	return newest, len(seen)
}

// callerOf returns the call whose client is to get a request from server
// (what names the request: "sampling", "elicitation", "login URL"): the call
// the request came in (a 2026-07-28 server's input request is handled in
// the context of the call it answers), else the one client session's
// newest call in flight that reached server. The client must have declared
// the capability (named capability) that can looks for. Any other case is
// a refusal, which says why.
func (b *bridge) callerOf(ctx context.Context, server, what, capability string, can func(*mcp.ClientCapabilities) bool) (*route, error) {
	if server == "" {
		return nil, &refusal{what: what, why: "it came from no server Switchboard knows"}
	}
	user := upstream.ConnUser(ctx)
	b.mu.Lock()
	r, _ := ctx.Value(routeKey{}).(*route)
	if r == nil || !r.reaches(server) || r.left || (user != "" && r.user != user) {
		var n int
		if r, n = b.callersLocked(server, user); n > 1 {
			b.mu.Unlock()
			return nil, &refusal{what: what, server: server, why: fmt.Sprintf(
				"calls to %q from %d client sessions are in flight, and nothing tells which of them it belongs to; ask again when only one client is calling the server", server, n)}
		}
	}
	b.mu.Unlock()
	if r == nil {
		if user != "" {
			return nil, &refusal{what: what, server: server, why: fmt.Sprintf(
				"no call of the user %q to %q is in flight; a user's own connection may ask only that user's client, while its call to it is in flight", user, server)}
		}
		return nil, &refusal{what: what, server: server, why: fmt.Sprintf(
			"no client call to %q is in flight; a server may ask a client only while that client's call to it is in flight", server)}
	}
	if c := r.caps(); c == nil || !can(c) {
		return nil, &refusal{what: what, server: server, why: fmt.Sprintf(
			"the client whose call to %q is in flight did not declare %s", server, capability)}
	}
	return r, nil
}

// A refusal is the error a server gets for a request no client is asked.
type refusal struct {
	what, server, why string
}

func (e *refusal) Error() string {
	return fmt.Sprintf("switchboard refused the %s request: %s", e.what, e.why)
}

// refused notes a refusal in the gateway's log and returns it.
func (b *bridge) refused(err error) error {
	if b.log != nil {
		var r *refusal
		if errors.As(err, &r) {
			b.log.Warn("refused a server's request toward a client", "server", r.server, "request", r.what, "why", r.why)
		}
	}
	return err
}

func (b *bridge) createMessage(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	server := upstream.ServerOf(ctx)
	r, err := b.callerOf(ctx, server, "sampling", "sampling", func(c *mcp.ClientCapabilities) bool { return c.Sampling != nil })
	if err != nil {
		return nil, b.refused(err)
	}
	params := labelSampling(server, req.Params)
	if r.susp != nil {
		resp, err := r.susp.askClient(ctx, b.inputID(), params)
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
	cctx, stop := toClient(ctx, r)
	defer stop()
	return r.ss.CreateMessage(cctx, params)
}

func (b *bridge) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	server := upstream.ServerOf(ctx)
	r, err := b.callerOf(ctx, server, "elicitation", "elicitation", func(c *mcp.ClientCapabilities) bool { return c.Elicitation != nil })
	if err != nil {
		return nil, b.refused(err)
	}
	params := labelElicit(server, req.Params)
	if r.susp != nil {
		resp, err := r.susp.askClient(ctx, b.inputID(), params)
		if err != nil {
			return nil, err
		}
		if res, ok := resp.(*mcp.ElicitResult); ok {
			return res, nil
		}
		return nil, fmt.Errorf("switchboard: the client answered elicitation with %T", resp)
	}
	cctx, stop := toClient(ctx, r)
	defer stop()
	return r.ss.Elicit(cctx, params)
}

func (b *bridge) inputID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	return "sb-input-" + strconv.Itoa(b.next)
}

// progress passes a progress notification on under the client's own token.
func (b *bridge) progress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	tok, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	// Only the server the call reached, on the calling user's own
	// connection, speaks for it: a token is a number any server can guess.
	server, user := upstream.ServerOf(ctx), upstream.ConnUser(ctx)
	b.mu.Lock()
	r := b.tokens[tok]
	ours := r != nil && r.reaches(server) && (user == "" || r.user == user)
	b.mu.Unlock()
	if !ours || r.ss == nil {
		return
	}
	p := *req.Params
	p.ProgressToken = r.token
	// On the call's own response stream, as a log message goes: sent
	// unrelated, it would wait for the client's standalone stream, which
	// the client may open after the first notification, or never.
	cctx, stop := toClient(ctx, r)
	defer stop()
	r.ss.NotifyProgress(cctx, &p)
}

// logging passes a server's log message on to the one client session with
// a call to that server in flight (on the call's own response, for a call
// on the fast lane), else to the session whose call to it ended last: a
// message may be handled after the call it was sent in. With calls of two
// sessions or more in flight, neither gets it: it cannot be told whose it
// is.
func (b *bridge) logging(ctx context.Context, req *mcp.LoggingMessageRequest) {
	server, user := upstream.ServerOf(ctx), upstream.ConnUser(ctx)
	b.mu.Lock()
	r, n := b.callersLocked(server, user)
	ss := b.last[lastKey(server, user)]
	b.mu.Unlock()
	switch {
	case n > 1:
		return
	case r != nil:
		if r.sink != nil && r.sink.notify("notifications/message", req.Params) {
			return
		}
		ss = r.ss // answered already: as after any call
		if ss != nil {
			// On the call's own stream while it is open, before its result.
			cctx, stop := toClient(ctx, r)
			defer stop()
			ctx = cctx
		}
	}
	if ss != nil {
		ss.Log(ctx, req.Params)
	}
}
