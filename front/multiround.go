package front

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/identity"
)

// From the 2026-07-28 revision on, a server may not send requests to the
// client while it serves one of the client's requests: it answers with the
// input it needs (an input-required result) and the client calls again with
// the answers (multi round-trip requests, SEP-2322). An upstream server that
// asks for sampling or elicitation during a call cannot know that, so the
// gateway suspends the upstream call, turns the server's request into an
// input request, and resumes the call when the client comes back.

// abandonAfter is how long a suspended call waits for its client to come
// back with the input before it is cancelled.
const abandonAfter = 5 * time.Minute

// multiRound reports whether a client session speaks multi round-trip.
func multiRound(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= "2026-07-28"
}

// suspended is a call of a multi round-trip client, running in the
// background across the client's calls.
type suspended struct {
	token     string
	ss        *mcp.ServerSession       // the client session whose call it is
	stateless bool                     // ss is a stateless request's: the token alone is the client's
	user      string                   // the signed-in user whose call it is (settings.identity); "" without
	caps      *mcp.ClientCapabilities  // what the client declared with the call (per request at 2026-07-28)
	result    chan *mcp.CallToolResult // the call's result, once
	ended     chan struct{}            // closed when the call has ended, before its result is sent
	asks      chan *ask                // input the upstream server needs
	cancel    context.CancelFunc

	// Guarded by bridge.mu: continuations of one call may come at once.
	cur     *ask        // the input request the client is to answer; nil while a request awaits the call
	busy    bool        // a client request awaits the call (await): no other may continue it
	abandon *time.Timer // cancels the call if the client never comes back
}

// ask is one input request from the upstream server, waiting for the answer.
type ask struct {
	id    string
	req   mcp.InputRequest
	reply chan mcp.InputResponse // buffered: the answer, once
}

type suspendedKey struct{}

// askClient passes an upstream server's request to the client of the call
// and waits for the answer.
func (sp *suspended) askClient(ctx context.Context, id string, req mcp.InputRequest) (mcp.InputResponse, error) {
	a := &ask{id: id, req: req, reply: make(chan mcp.InputResponse, 1)}
	select {
	case sp.asks <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-sp.ended:
		return nil, errors.New("switchboard: the client call this request came in has ended")
	}
	select {
	case r := <-a.reply:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// suspendable runs a tool call. For a multi round-trip client it runs the
// call in the background, so that the call can outlive the request when
// the upstream server needs input, and answers either with the call's
// result or with an input-required result; a client call that carries a
// requestState resumes the suspended call with the client's answer.
// Other clients get run(ctx) as it is.
func (s *Server) suspendable(ctx context.Context, req *mcp.CallToolRequest, run func(context.Context) *mcp.CallToolResult) *mcp.CallToolResult {
	b := s.bridge
	if !multiRound(req.Session) {
		return run(ctx)
	}
	if state := req.Params.RequestState; state != "" {
		sp, a, why := b.resume(state, req.Session, statelessRequest(ctx), subjectOf(ctx))
		switch why {
		case resumeOther:
			// Another session's answer, to an approval form above all, is
			// no answer: the call stays suspended for its own client.
			return errorResult(errors.New("switchboard: this requestState belongs to another client session"))
		case resumeBusy:
			return errorResult(errors.New("switchboard: another request is already continuing the call this requestState belongs to; nothing was done for this one: wait for that request's answer"))
		}
		if sp == nil {
			if owner, ok := stateOwner(state); ok && owner != b.replica {
				return errorResult(fmt.Errorf("switchboard: the call this answers was suspended on replica %s, not on this one (%s), which cannot reach it; nothing was sent to the server twice; call the tool again", owner, b.replica))
			}
			return errorResult(errors.New("switchboard: unknown or expired requestState: the call it belonged to has ended; call the tool again"))
		}
		if a != nil {
			resp, ok := req.Params.InputResponses[a.id]
			if !ok {
				sp.cancel()
				b.forget(sp)
				return errorResult(fmt.Errorf("switchboard: inputResponses lacks the answer to %q", a.id))
			}
			a.reply <- resp
		}
		return b.await(ctx, sp)
	}
	// The call outlives the request, not the server: Close cancels it and
	// waits for it.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopClose := context.AfterFunc(s.ctx, cancel)
	stopHalt := context.AfterFunc(s.drain.halt, cancel)
	stop := func() { stopClose(); stopHalt() }
	sp := b.suspend(cancel, req.Session, statelessRequest(ctx), req.ClientCapabilities(), subjectOf(ctx))
	cctx = context.WithValue(cctx, suspendedKey{}, sp)
	if !s.bg.Go(func() {
		defer stop()
		defer cancel()
		res := run(cctx)
		close(sp.ended)
		sp.result <- res
	}) {
		stop()
		cancel()
		b.forget(sp)
		return errorResult(errors.New("switchboard: the gateway is shutting down"))
	}
	return b.await(ctx, sp)
}

// suspend registers a new suspended call of client session ss and of
// user (the signed-in user's subject, "" without identity), which cancel
// cancels; caps is what the client declared with the call. A call of a
// stateless request belongs to whoever holds its requestState, with
// identity the same user: the next request of its client has a session
// of its own, and may reach another replica.
func (b *bridge) suspend(cancel context.CancelFunc, ss *mcp.ServerSession, stateless bool, caps *mcp.ClientCapabilities, user string) *suspended {
	token := newState(b.replica)
	b.mu.Lock()
	defer b.mu.Unlock()
	sp := &suspended{token: token, result: make(chan *mcp.CallToolResult, 1), ended: make(chan struct{}), asks: make(chan *ask), cancel: cancel, ss: ss, stateless: stateless, caps: caps, user: user, busy: true}
	if b.suspended == nil {
		b.suspended = map[string]*suspended{}
	}
	b.suspended[sp.token] = sp
	return sp
}

// Why resume does not resume a call it finds.
const (
	resumeOK    = iota
	resumeOther // the call is another client session's
	resumeBusy  // another request is continuing the call
)

// resume finds a suspended call by its requestState, for the client
// session ss (stateless: a stateless request's) of user, and takes it:
// the input request the client is to answer (nil if none), which no other
// request then gets. A call of another session or another user, or one
// that another request is continuing, is left as it is, with why.
func (b *bridge) resume(state string, ss *mcp.ServerSession, stateless bool, user string) (sp *suspended, a *ask, why int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	sp = b.suspended[state]
	switch {
	case sp == nil:
		return nil, nil, resumeOK
	case sp.ss != ss && !(sp.stateless && stateless), sp.user != user:
		return nil, nil, resumeOther
	case sp.busy:
		return nil, nil, resumeBusy
	}
	if sp.abandon != nil {
		sp.abandon.Stop()
	}
	sp.busy = true
	a, sp.cur = sp.cur, nil
	return sp, a, resumeOK
}

// stop forgets every suspended call and stops the timers that would
// abandon them; the server's Close cancels the calls themselves.
func (b *bridge) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for token, sp := range b.suspended {
		if sp.abandon != nil {
			sp.abandon.Stop()
		}
		delete(b.suspended, token)
	}
}

func (b *bridge) forget(sp *suspended) {
	b.mu.Lock()
	delete(b.suspended, sp.token)
	b.mu.Unlock()
	if b.changed != nil {
		b.changed()
	}
}

// abandonAll cancels and forgets every suspended call: a drain ran out.
func (b *bridge) abandonAll() {
	b.mu.Lock()
	all := b.suspended
	b.suspended = nil
	b.mu.Unlock()
	for _, sp := range all {
		if sp.abandon != nil {
			sp.abandon.Stop()
		}
		sp.cancel()
	}
}

// A requestState names the replica that holds the call (so that another
// replica can send the continuation there) and 128 random bits: in
// stateless mode, holding it is what makes a client the call's own.
const statePrefix = "sb1."

// newState returns a new requestState for a call held by replica.
func newState(replica string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return statePrefix + replica + "." + base64.RawURLEncoding.EncodeToString(b[:])
}

// stateOwner returns the replica a requestState names.
func stateOwner(state string) (string, bool) {
	rest, ok := strings.CutPrefix(state, statePrefix)
	if !ok {
		return "", false
	}
	owner, _, ok := strings.Cut(rest, ".")
	return owner, ok && owner != ""
}

type statelessKey struct{}

// statelessRequest reports whether ctx is that of a request served
// statelessly over HTTP (withStateless).
func statelessRequest(ctx context.Context) bool {
	v, _ := ctx.Value(statelessKey{}).(bool)
	return v
}

// withStateless marks the requests h serves as stateless.
func withStateless(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), statelessKey{}, true)))
	})
}

// await waits for the call's result or for input it needs.
func (b *bridge) await(ctx context.Context, sp *suspended) *mcp.CallToolResult {
	select {
	case res := <-sp.result:
		b.forget(sp)
		return res
	case a := <-sp.asks:
		b.mu.Lock()
		sp.cur, sp.busy = a, false
		sp.abandon = time.AfterFunc(abandonAfter, func() { sp.cancel(); b.forget(sp) })
		b.mu.Unlock()
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{a.id: a.req}, RequestState: sp.token}
	case <-ctx.Done():
		sp.cancel()
		b.forget(sp)
		return errorResult(ctx.Err())
	}
}

// subjectOf returns the subject of the signed-in user ctx carries, or "".
func subjectOf(ctx context.Context) string {
	if u := identity.From(ctx); u != nil {
		return u.Subject
	}
	return ""
}
