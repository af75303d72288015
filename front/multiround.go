package front

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	token   string
	ss      *mcp.ServerSession       // the client session whose call it is
	result  chan *mcp.CallToolResult // the call's result, once
	asks    chan *ask                // input the upstream server needs
	cancel  context.CancelFunc
	cur     *ask        // the input request the client is to answer
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
		sp, other := b.resume(state, req.Session)
		if other {
			// Another session's answer, to an approval form above all, is
			// no answer: the call stays suspended for its own client.
			return errorResult(errors.New("switchboard: this requestState belongs to another client session"))
		}
		if sp == nil {
			return errorResult(errors.New("switchboard: unknown or expired requestState: the call it belonged to has ended; call the tool again"))
		}
		if a := sp.cur; a != nil {
			resp, ok := req.Params.InputResponses[a.id]
			if !ok {
				sp.cancel()
				b.forget(sp)
				return errorResult(fmt.Errorf("switchboard: inputResponses lacks the answer to %q", a.id))
			}
			sp.cur = nil
			a.reply <- resp
		}
		return b.await(ctx, sp)
	}
	// The call outlives the request, not the server: Close cancels it and
	// waits for it.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(s.ctx, cancel)
	sp := b.suspend(cancel, req.Session)
	cctx = context.WithValue(cctx, suspendedKey{}, sp)
	if !s.bg.Go(func() {
		defer stop()
		defer cancel()
		sp.result <- run(cctx)
	}) {
		stop()
		cancel()
		b.forget(sp)
		return errorResult(errors.New("switchboard: the gateway is shutting down"))
	}
	return b.await(ctx, sp)
}

// suspend registers a new suspended call of client session ss, which
// cancel cancels.
func (b *bridge) suspend(cancel context.CancelFunc, ss *mcp.ServerSession) *suspended {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	sp := &suspended{token: "sb-call-" + strconv.Itoa(b.next), result: make(chan *mcp.CallToolResult, 1), asks: make(chan *ask), cancel: cancel, ss: ss}
	if b.suspended == nil {
		b.suspended = map[string]*suspended{}
	}
	b.suspended[sp.token] = sp
	return sp
}

// resume finds a suspended call by its requestState, for the client
// session ss. other reports a call of another session, which is left as it
// is.
func (b *bridge) resume(state string, ss *mcp.ServerSession) (sp *suspended, other bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	sp = b.suspended[state]
	if sp != nil && sp.ss != ss {
		return nil, true
	}
	if sp != nil && sp.abandon != nil {
		sp.abandon.Stop()
	}
	return sp, false
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
	defer b.mu.Unlock()
	delete(b.suspended, sp.token)
}

// await waits for the call's result or for input it needs.
func (b *bridge) await(ctx context.Context, sp *suspended) *mcp.CallToolResult {
	select {
	case res := <-sp.result:
		b.forget(sp)
		return res
	case a := <-sp.asks:
		sp.cur = a
		b.mu.Lock()
		sp.abandon = time.AfterFunc(abandonAfter, func() { sp.cancel(); b.forget(sp) })
		b.mu.Unlock()
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{a.id: a.req}, RequestState: sp.token}
	case <-ctx.Done():
		sp.cancel()
		b.forget(sp)
		return errorResult(ctx.Err())
	}
}
