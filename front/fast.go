package front

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// The fast lane serves the commonest request of transparent mode over
// Streamable HTTP, a plain tools/call in a session, without go-sdk on
// either side: the request is read with a scanner (jsonscan), the call goes
// to the stdio server as bytes (gateway.Session.CallToolRaw), and a result
// go-sdk would have passed on unchanged comes back as the server wrote it,
// answered as application/json. Decoding and encoding in go-sdk, on both
// sides, were most of a call's cost (docs/bench.md). In proxy mode it
// serves the calls of direct tools the same way, their results bounded
// (gateway.Engine.Bound) as callDirect bounds them, and the calls of the
// mcp tool, whatever they ask: their arguments go to the engine as go-sdk
// would hand them to addProxyTool's handler (proxyInput), the engine
// carries them out as it always does (its own calls of stdio servers go
// as bytes too: gateway's callRaw), and the answer is the handler's.
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
// What the usual path does around a call, the lane does too: metrics,
// audit, the call log, cancellation by the client (notifications/cancelled
// or a closed connection) and by draining. What the server sends toward the
// client during the call reaches the calling session as it would: log
// messages on the call's own response (which becomes an event stream for
// them, see laneWriter), requests (sampling, elicitation) on the session's
// standalone stream, where go-sdk sends them on the usual path too; a client
// that declared it can be asked gets the lane only while that stream is
// open, so that the lane's speed never outruns the stream's opening.
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

	calls atomic.Int64 // calls served on the lane

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
		if p := l.s.proxyIn; p != nil && call.name == p.name {
			ok = l.serveProxy(w, r, ls, call, p)
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

// around runs core, a call on the lane, as go-sdk would run its handler:
// in the client's engine session, cancelled by the client (its
// notifications/cancelled, a closed connection) and by a drain that runs
// out, after the roots of a client that declared them are known
// (awaitRoots), with what the server sends toward the client during the
// call routed to it (the bridge). It reports what core does: false when
// core wrote nothing and the usual path is to answer.
func (l *fastLane) around(w http.ResponseWriter, r *http.Request, ls *laneSession, call fastCall,
	core func(ctx context.Context, es *gateway.Session, ss *mcp.ServerSession, lw *laneWriter) bool) bool {
	s := l.s
	var ss *mcp.ServerSession
	if ls != nil {
		ss = ls.ss
	}
	es, ctx, cancel := s.session(r.Context(), ss)
	defer cancel()
	stop := context.AfterFunc(s.drain.halt, cancel)
	defer stop()
	if ls != nil {
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
	ctx, _, release := s.bridge.enterLane(ctx, ss, lw.notify)
	defer release()
	// Once answered, the call is no longer in flight: what its servers
	// send from then on is not the client's because of it.
	lw.answering = release
	return core(ctx, es, ss, lw)
}

// serve makes the call of dt and answers it, or reports false, having
// done nothing, when the engine declines it.
func (l *fastLane) serve(w http.ResponseWriter, r *http.Request, ls *laneSession, call fastCall, dt directTool) bool {
	return l.around(w, r, ls, call, func(ctx context.Context, es *gateway.Session, ss *mcp.ServerSession, lw *laneWriter) bool {
		return l.callDirect(ctx, es, ss, lw, dt, call.args)
	})
}

// callDirect is serve's call, in around.
func (l *fastLane) callDirect(ctx context.Context, es *gateway.Session, ss *mcp.ServerSession, lw *laneWriter, dt directTool, args json.RawMessage) bool {
	s := l.s
	transparent := s.single != ""
	done := s.opts.Metrics.start("call")
	began := time.Now()
	raw, res, err := es.CallToolRaw(ctx, dt.server, dt.name, args)
	if errors.Is(err, upstream.ErrNoFastPath) {
		if lw.abandon() {
			return false
		}
		// A 2026-07-28 server asked for input after it had sent the
		// client log messages on this response: it cannot go the usual
		// way now.
		err = errors.New("switchboard: the server asked for input in the middle of a call on the fast lane; call again")
	}
	l.calls.Add(1)
	s.opts.Metrics.fastCall()
	if cause := context.Cause(s.drain.halt); cause != nil && ctx.Err() != nil {
		err = fmt.Errorf("switchboard: the call was cancelled: %w", cause)
	}
	// As callDirect: in transparent mode a result that fits goes as it
	// came; a direct tool's is always bounded (gateway.Engine.Bound).
	var out []byte
	if err == nil && raw != nil && transparent && s.eng.FitsRaw(raw) {
		res, out = &mcp.CallToolResult{IsError: raw.IsError}, raw.Result
	} else {
		if err == nil && raw != nil {
			res, err = upstream.DecodeResult(raw.Result)
		}
		if err == nil && (!transparent || !s.eng.Fits(res)) {
			res, err = s.eng.Bound("call-"+dt.name, res)
		}
		shown := res
		if err != nil {
			shown = errorResult(err)
		}
		var merr error
		if out, merr = shown.MarshalJSON(); merr != nil {
			out, _ = errorResult(merr).MarshalJSON()
		}
	}
	done(dt.server, err != nil || res.IsError)
	if err != nil {
		res = nil
	}
	s.observeDirect(ctx, &mcp.CallToolRequest{Session: ss}, nil, dt, res, err, began)
	lw.finish(out)
	return true
}

// serveProxy carries out a call of the proxy tool (the mcp tool), any
// action, and answers it, as addProxyTool's handler does, or reports false,
// having done nothing, when its arguments are not what go-sdk would pass
// that handler unchanged in meaning (see proxyInput): go-sdk then answers.
func (l *fastLane) serveProxy(w http.ResponseWriter, r *http.Request, ls *laneSession, call fastCall, p *proxyInput) bool {
	args, ok := p.args(call.args)
	if !ok {
		return false
	}
	s := l.s
	return l.around(w, r, ls, call, func(ctx context.Context, es *gateway.Session, ss *mcp.ServerSession, lw *laneWriter) bool {
		// Counted as it starts: nothing after this declines it (a direct
		// call is counted once the engine has not).
		l.calls.Add(1)
		s.opts.Metrics.fastCall()
		done := s.opts.Metrics.start("mcp")
		began := time.Now()
		res := es.Handle(s.approving(ctx, ss), args)
		done(res.Details.Server, res.IsError)
		s.observeProxy(ctx, &mcp.CallToolRequest{Session: ss}, nil, args, res, began)
		shown := res.MCP()
		if cause := context.Cause(s.drain.halt); cause != nil && ctx.Err() != nil {
			shown = errorResult(fmt.Errorf("switchboard: the call was cancelled: %w", cause)) // as haltable
		}
		out, err := shown.MarshalJSON()
		if err != nil {
			out, _ = errorResult(err).MarshalJSON()
		}
		lw.finish(out)
		return true
	})
}

// A laneWriter writes the answer of a call on the fast lane: as one
// application/json response, or, once a notification for the client comes
// during the call (a log message), as an event stream that carries it and
// then the answer, as go-sdk does.
type laneWriter struct {
	w         http.ResponseWriter
	id        []byte // the request's id, as written
	answering func() // called before the answer is written, if set

	mu     sync.Mutex
	events bool // the response is an event stream
	done   bool // the answer is written: nothing more may be
}

// notify sends the client a notification during the call, and reports
// false when the call has been answered (the bridge sends it as after any
// call).
func (lw *laneWriter) notify(method string, params any) bool {
	msg, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
	if err != nil {
		return true // nothing to send
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.done {
		return false
	}
	lw.startEvents()
	lw.event(msg)
	return true
}

// abandon gives up the response for the usual path to write it, and
// reports whether it could: nothing has been written yet.
func (lw *laneWriter) abandon() bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.events {
		return false
	}
	lw.done = true
	return true
}

// finish writes the answer, whose result is out.
func (lw *laneWriter) finish(out []byte) {
	b := make([]byte, 0, len(out)+len(lw.id)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, lw.id...)
	b = append(b, `,"result":`...)
	b = append(b, out...)
	b = append(b, '}')
	if lw.answering != nil {
		lw.answering()
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.done = true
	if lw.events {
		lw.event(b)
		return
	}
	h := lw.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, no-transform")
	_, _ = lw.w.Write(b)
}

func (lw *laneWriter) startEvents() {
	if lw.events {
		return
	}
	lw.events = true
	h := lw.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Connection", "keep-alive")
	lw.w.WriteHeader(http.StatusOK)
}

// event writes one event of the stream and flushes it.
func (lw *laneWriter) event(data []byte) {
	_, _ = lw.w.Write([]byte("event: message\ndata: "))
	_, _ = lw.w.Write(data)
	_, _ = lw.w.Write([]byte("\n\n"))
	if f, ok := lw.w.(http.Flusher); ok {
		f.Flush()
	}
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

// fastCall is what the lane reads of a request.
type fastCall struct {
	id, args []byte // as written
	name     string
	cancels  []byte // for notifications/cancelled: the requestId, as written
}

// scanCall reads a body that is one tools/call request with params of a
// name and maybe arguments (an object), or one notifications/cancelled
// (cancels set). Anything else, or anything unusual (see jsonscan), is not
// ok.
func scanCall(body []byte) (c fastCall, ok bool) {
	var version, method, params []byte
	var seen int
	if !jsonscan.Members(body, func(key, v []byte) bool {
		seen++
		switch string(key) {
		case "jsonrpc":
			version = v
		case "id":
			c.id = v
		case "method":
			method = v
		case "params":
			params = v
		default:
			return false
		}
		return true
	}) || string(version) != `"2.0"` || params == nil || params[0] != '{' {
		return c, false
	}
	switch string(method) {
	case `"tools/call"`:
		if !plainID(c.id) || seen != 4 {
			return c, false
		}
		var pseen int
		ok = jsonscan.Members(params, func(key, v []byte) bool {
			pseen++
			switch string(key) {
			case "name":
				name, ok := jsonscan.PlainString(v)
				c.name = name
				return ok && name != ""
			case "arguments":
				c.args = v
				return v[0] == '{'
			}
			return false
		})
		return c, ok && c.name != "" && pseen == 1+btoi(c.args != nil)
	case `"notifications/cancelled"`:
		if c.id != nil {
			return c, false
		}
		jsonscan.Members(params, func(key, v []byte) bool {
			if string(key) == "requestId" && plainID(v) {
				c.cancels = v
			}
			return true
		})
		return c, c.cancels != nil
	}
	return c, false
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// plainID reports an id written as a plain integer or a string of
// printable ASCII without escapes: one whose bytes are the id.
func plainID(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	if v[0] == '"' {
		_, ok := jsonscan.PlainString(v)
		return ok
	}
	d := v
	if d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 15 || (len(d) > 1 && d[0] == '0') {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// readBody reads the body, at most limit bytes; over it, or on a read
// error, it puts back what it read so that go-sdk answers as it would.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil || int64(len(b)) > limit {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
		if err == nil {
			err = errors.New("over the limit")
		}
		return nil, err
	}
	return b, nil
}

// acceptsBoth reports whether the Accept header values take both JSON and
// an event stream, as go-sdk requires of a POST.
func acceptsBoth(values []string) bool {
	jsonOK, streamOK := false, false
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}
