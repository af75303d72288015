package front

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/identity"
)

// The fast lane serves the commonest request of transparent mode over
// Streamable HTTP, a plain tools/call in a session, without go-sdk on
// either side: the request is read with a scanner (jsonscan), the call goes
// to the stdio server as bytes (gateway.Session.CallToolRaw), and a result
// go-sdk would have passed on unchanged comes back as the server wrote it,
// answered as application/json. Decoding and encoding in go-sdk, on both
// sides, were most of a call's cost (docs/bench.md). In proxy mode it
// serves the calls of direct tools the same way, their results bounded
// (gateway.Engine.Bound), and the calls of the mcp tool, whatever they
// ask: their arguments go to the engine as written, as go-sdk hands them
// to addProxyTool's handler, the engine carries them out as it
// always does (its own calls of stdio servers go as bytes too: gateway's
// callRaw), and the answer is the handler's.
//
// Everything else goes the usual way, untouched: a request the lane does
// not take is handed to go-sdk with its body as it came. The lane takes
// only what it is sure to treat as go-sdk would: one request, in a session
// it knows (initialized, not at 2026-07-28) or stateless, at a protocol
// version go-sdk accepts, with no header go-sdk checks beyond those, of a
// mirrored tool without an output schema, with params of a name and
// arguments only (no _meta: no progress token, no trace context), while
// not draining and with no tracer. The engine may still decline (an
// approval rule, a quarantined tool, an HTTP upstream), before anything is
// sent; a result that is not plain text, or that does not fit
// settings.output, is decoded and bounded as on the usual path.
//
// The lane carries out a call by the pipeline go-sdk's handlers use
// (pipeline.go: callTool, callProxy), which does what is done around it:
// metrics, routing, approval, bounds, the call log, audit. The lane keeps
// what is about its request and bytes: reading the request (fastwire.go),
// cancellation by the client (notifications/cancelled or a closed
// connection) and by draining, and writing the answer (laneWriter). What
// the server sends toward the client during the call reaches the calling
// session as it would: log messages on the call's own response (which
// becomes an event stream for them, see laneWriter), requests (sampling,
// elicitation) on the session's standalone stream, where go-sdk sends them
// on the usual path too; a client that declared it can be asked gets the
// lane only while that stream is open, so that the lane's speed never
// outruns the stream's opening.
//
// go-sdk ends a session idle for SessionTimeout, counting only the requests
// it sees; the lane hands a session's request to go-sdk when go-sdk last saw
// one so long ago that its timer could end the session before a fast call
// could finish, so a busy session never expires under its calls.
type fastLane struct {
	s       *Server
	next    http.Handler
	limit   int64         // the body limit
	timeout time.Duration // go-sdk's SessionTimeout
	call    time.Duration // the longest a call may take (the server's request timeout)

	stateless bool // no sessions: each request stands alone

	mu       sync.Mutex
	sessions map[string]*laneSession
}

// laneSession is what the lane keeps per client session.
type laneSession struct {
	ss *mcp.ServerSession

	// Guarded by fastLane.mu.
	slow     int                           // requests in go-sdk's hands
	streams  int                           // standalone streams (GETs) open
	seen     time.Time                     // when go-sdk last saw a request end
	inflight map[string]context.CancelFunc // fast calls, by their request id as written
}

func newFastLane(s *Server, next http.Handler, limit int64, timeout time.Duration, stateless bool) *fastLane {
	l := &fastLane{s: s, next: next, limit: limit, timeout: timeout, stateless: stateless, sessions: map[string]*laneSession{}}
	if def, ok := s.cfg.Server(s.single); ok {
		l.call = def.RequestTimeout
	}
	return l
}

// FastLane reports whether the handler made last (Handler) serves tool
// calls on the fast lane: mirrored tools in transparent mode, direct tools
// and the mcp tool in proxy mode, unless turned off.
func (s *Server) FastLane() bool { return s.lane.Load() != nil }

// LeanCalls reports whether every tool call the handler made last serves
// passes a server's call on with little work of its own: transparent mode,
// the lane on. In proxy mode the engine does more with each mcp tool call
// (resolving, rendering, bounding), on the lane too: serve tunes its
// collector for that (cmd/switchboard/memory.go).
func (s *Server) LeanCalls() bool { return s.single != "" && s.FastLane() }

// add learns of an initialized session, which lives as long as ctx.
func (l *fastLane) add(ss *mcp.ServerSession, ctx context.Context) {
	id := ss.ID()
	if id == "" {
		return
	}
	l.mu.Lock()
	if l.sessions[id] == nil {
		l.sessions[id] = &laneSession{ss: ss, seen: time.Now(), inflight: map[string]context.CancelFunc{}}
	}
	l.mu.Unlock()
	if ctx.Err() != nil {
		l.remove(id) // it ended already; its watcher may have been first
	}
}

// find looks for a session the lane has not heard of yet: go-sdk takes
// requests once the client's initialize is answered, maybe before its
// notifications/initialized has been handled.
func (l *fastLane) find(id string) *laneSession {
	for ss := range l.s.mcp.Sessions() {
		if ss.ID() == id && ss.InitializeParams() != nil {
			l.s.laneAdd(l, ss)
			l.mu.Lock()
			defer l.mu.Unlock()
			return l.sessions[id]
		}
	}
	return nil
}

// remove forgets a session that has ended.
func (l *fastLane) remove(id string) {
	l.mu.Lock()
	delete(l.sessions, id)
	l.mu.Unlock()
}

func (l *fastLane) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		l.other(w, r)
		return
	}
	var ls *laneSession // nil when stateless
	id := r.Header.Get("Mcp-Session-Id")
	switch {
	case l.stateless && id != "":
		l.next.ServeHTTP(w, r) // go-sdk's business
		return
	case !l.stateless:
		l.mu.Lock()
		ls = l.sessions[id]
		l.mu.Unlock()
		if ls == nil && id != "" {
			ls = l.find(id)
		}
		if ls == nil {
			l.next.ServeHTTP(w, r)
			return
		}
	}
	if !l.takes(r, ls) {
		l.slow(w, r, ls)
		return
	}
	body, err := readBody(r, l.limit)
	if err != nil {
		l.slow(w, r, ls)
		return
	}
	call, ok := scanCall(body)
	// What go-sdk would refuse, or change as it decodes, it shall see.
	// (bodyGuard, in front of the lane, has refused what is not JSON.)
	ok = ok && utf8.Valid(body)
	if ok && call.cancels != nil {
		if ls != nil {
			l.cancel(ls, call.cancels)
		}
		ok = false
	}
	if ok {
		if l.s.proxyName != "" && call.name == l.s.proxyName {
			ok = l.serveProxy(w, r, ls, call)
		} else if dt, direct := l.s.laneTool(call.name); direct {
			ok = l.serve(w, r, ls, call, dt)
		} else {
			ok = false
		}
	}
	if !ok {
		r.Body = io.NopCloser(bytes.NewReader(body))
		l.slow(w, r, ls)
	}
}

// other hands go-sdk a request that is not a POST, noting a session's
// standalone stream (a GET) while it is open. A client opens it as soon as
// its initialize is answered, maybe before go-sdk has handled its
// notifications/initialized, which makes the session known to the lane:
// the stream's session is looked for then (find).
func (l *fastLane) other(w http.ResponseWriter, r *http.Request) {
	var ls *laneSession
	if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodGet && id != "" && !l.stateless {
		l.mu.Lock()
		ls = l.sessions[id]
		l.mu.Unlock()
		if ls == nil {
			ls = l.find(id)
		}
		if ls != nil {
			l.mu.Lock()
			ls.streams++
			l.mu.Unlock()
		}
	}
	if ls != nil {
		defer func() {
			l.mu.Lock()
			ls.streams--
			l.mu.Unlock()
		}()
	}
	l.next.ServeHTTP(w, r)
}

// slow hands a request to go-sdk, noting when it ends.
func (l *fastLane) slow(w http.ResponseWriter, r *http.Request, ls *laneSession) {
	if ls == nil {
		l.next.ServeHTTP(w, r)
		return
	}
	l.mu.Lock()
	ls.slow++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		ls.slow--
		ls.seen = time.Now()
		l.mu.Unlock()
	}()
	l.next.ServeHTTP(w, r)
}

// takes reports whether the request's headers and session let the lane take
// it, and whether go-sdk would let it pass to the server as it is.
func (l *fastLane) takes(r *http.Request, ls *laneSession) bool {
	s := l.s
	if s.opts.Engine.Telemetry != nil || s.drain.draining.Load() {
		return false
	}
	if ls != nil {
		p := ls.ss.InitializeParams()
		if p == nil || p.ProtocolVersion >= "2026-07-28" {
			return false
		}
		// A request the server sends the client during the call goes to
		// the client's standalone stream, not the call's response (go-sdk
		// relates it to a request it never saw): a client that can be
		// asked must have one open.
		askable := p.Capabilities != nil && (p.Capabilities.Sampling != nil || p.Capabilities.Elicitation != nil)
		l.mu.Lock()
		fresh := ls.slow > 0 || time.Since(ls.seen)+l.call+time.Minute < l.timeout
		streams := ls.streams
		l.mu.Unlock()
		if l.timeout > 0 && !fresh {
			return false // let go-sdk see this one, and keep the session alive
		}
		if askable && streams == 0 {
			return false
		}
		// Serving with identity, a session is its user's: go-sdk refuses
		// a request of it that another user's token carries, and the lane
		// takes only what go-sdk would let through.
		if l.s.ident.Load() != nil && !l.s.sessionOfUser(ls.ss, identity.From(r.Context())) {
			return false
		}
	}
	switch r.Header.Get("Mcp-Protocol-Version") {
	case "2025-03-26", "2025-06-18", "2025-11-25":
	default:
		return false
	}
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		return false
	}
	if !acceptsBoth(r.Header.Values("Accept")) {
		return false
	}
	for k := range r.Header {
		switch {
		case k == "Mcp-Session-Id", k == "Mcp-Protocol-Version":
		case strings.HasPrefix(k, "Mcp-"), k == "Last-Event-Id":
			return false // headers go-sdk checks against the body
		}
	}
	// go-sdk's DNS rebinding check refuses a foreign Host on loopback.
	return !reboundHost(r)
}

// around runs core, a call on the lane, in the context go-sdk would give
// its handler: cancelled by the client (its notifications/cancelled, a
// closed connection) and by a drain that runs out (as haltable), once the
// roots of a client that declared them are known (as awaitRoots). It
// reports what core does: false when core wrote nothing and the usual path
// is to answer.
func (l *fastLane) around(w http.ResponseWriter, r *http.Request, ls *laneSession, call fastCall,
	core func(ctx context.Context, tc toolCall, lw *laneWriter) bool) bool {
	s := l.s
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(s.drain.halt, cancel)
	defer stop()
	var ss *mcp.ServerSession
	if ls != nil {
		ss = ls.ss
		key := string(call.id)
		l.mu.Lock()
		ls.inflight[key] = cancel
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			delete(ls.inflight, key)
			l.mu.Unlock()
		}()
	}
	if !s.rootsKnown(ctx, ss) {
		return false // cancelled while waiting: go-sdk answers, as it would have
	}
	lw := &laneWriter{w: w, id: call.id}
	tc := toolCall{ss: ss, name: call.name, args: call.args, cancel: cancel, lane: lw}
	return core(ctx, tc, lw)
}

// serve makes the call of dt (callTool) and answers it, or reports false,
// having done nothing, when the engine declines it.
func (l *fastLane) serve(w http.ResponseWriter, r *http.Request, ls *laneSession, call fastCall, dt directTool) bool {
	return l.around(w, r, ls, call, func(ctx context.Context, tc toolCall, lw *laneWriter) bool {
		ans, ok := l.s.callTool(ctx, &tc, dt)
		if !ok {
			return false
		}
		lw.finish(l.s.laneResult(ctx, ans))
		return true
	})
}

// serveProxy carries out a call of the proxy tool (the mcp tool), any
// action (callProxy), and answers it; its arguments go to the engine as
// written, as on go-sdk's path (addProxyTool).
func (l *fastLane) serveProxy(w http.ResponseWriter, r *http.Request, ls *laneSession, call fastCall) bool {
	return l.around(w, r, ls, call, func(ctx context.Context, tc toolCall, lw *laneWriter) bool {
		lw.finish(l.s.laneResult(ctx, answer{res: l.s.callProxy(ctx, &tc)}))
		return true
	})
}

// laneResult returns the bytes of an answer's result, as haltable would
// leave it: a call a drain cut at its bound answers with the shutdown's
// error.
func (s *Server) laneResult(ctx context.Context, ans answer) []byte {
	if err := s.halted(ctx); err != nil {
		ans = answer{res: errorResult(err)}
	}
	if ans.raw != nil {
		return ans.raw
	}
	out, err := ans.res.MarshalJSON()
	if err != nil {
		out, _ = errorResult(err).MarshalJSON()
	}
	return out
}

// cancel cancels the fast call a client's notifications/cancelled names,
// if it is one.
func (l *fastLane) cancel(ls *laneSession, id []byte) {
	l.mu.Lock()
	cancel := ls.inflight[string(id)]
	l.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
