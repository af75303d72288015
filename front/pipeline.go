package front

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/telemetry"
)

// The call pipeline. A client's tools/call comes in by one of two doors,
// go-sdk's handlers (addProxyTool, addDirect) or the fast lane (fastLane),
// and each door only reads its request and writes its answer: what is
// done around the call itself is done here, once for both, so that each
// promise is written once, in this order:
//
//   - metrics (Metrics.start) and the span (startSpan) start first, so that
//     they time all of it;
//   - the call runs in its client's engine session, its context ending
//     with the client session (session);
//   - what servers send toward a client during the call reaches this
//     call's client, and no other (bridge.enter);
//   - an approval rule asks this call's client, or denies the call with a
//     result that says why (approving); the engine applies the policy, the
//     pins and quarantine, and audits and reports the call (Options.OnCall);
//   - the call: the mcp tool (gateway.Session.Handle) or a server's tool
//     (gateway.Session.CallTool, or CallToolRaw, as bytes, on the lane);
//   - a server tool's result is bounded (bound);
//   - the end is recorded: metrics, the log line and the span
//     (observeProxy, observeDirect).
//
// The door gives the call its context: cancelled by its client, and at a
// drain's bound, whose error the door answers with (halted: go-sdk's
// haltable, the lane's around); it waits for the roots of a client that
// declared them (rootsKnown: go-sdk's awaitRoots, the lane's around); and
// go-sdk's door suspends a multi round-trip client's call (suspendable), a
// call the lane never takes.

// toolCall is a client's tools/call as a door hands it to the pipeline.
type toolCall struct {
	ss    *mcp.ServerSession // the client's session; nil without one
	name  string             // the tool called, as the client named it
	args  json.RawMessage    // its arguments as the door passes them on; nil for none
	meta  mcp.Meta           // the request's _meta (none on the lane)
	token any                // the client's progress token, if it gave one
	// cancel, if set, cancels the context the door runs the call in: the
	// pipeline then ends that context with the client session rather than
	// make one of its own (see session).
	cancel context.CancelFunc
	// lane is set for a call on the fast lane, which go-sdk never sees.
	lane laneSink
}

// A laneSink is the fast lane's side of a call it took (laneWriter).
type laneSink interface {
	// notify sends the client a notification during the call, on the
	// call's own response, as go-sdk would have, and reports false once
	// the call has been answered.
	notify(method string, params any) bool
	// abandon gives the call up for go-sdk to serve, and reports whether
	// it could: nothing has been written yet.
	abandon() bool
}

// sdkCall is the toolCall of a request go-sdk's handler got, with args as
// the handler has them.
func sdkCall(req *mcp.CallToolRequest, args json.RawMessage) toolCall {
	return toolCall{ss: req.Session, name: req.Params.Name, args: args, meta: req.Params.Meta, token: req.Params.GetProgressToken()}
}

// callFrame is what the pipeline holds for one call between enter and
// leave.
type callFrame struct {
	ctx   context.Context // the session's, routed through the bridge
	es    *gateway.Session
	up    string // the progress token the call carries upstream, if the client gave one
	span  *telemetry.Span
	began time.Time
	done  func(server string, isError bool) // records the call's metrics

	release, cancel func()
}

// enter starts a call of the given kind ("mcp" or "call", as Metrics
// counts them): metrics and span, the client's engine session, routing.
// leave ends it.
func (s *Server) enter(ctx context.Context, tc *toolCall, kind string) callFrame {
	f := callFrame{done: s.opts.Metrics.start(kind), began: time.Now()}
	ctx, f.span = s.startSpan(ctx, tc)
	f.es, ctx, f.cancel = s.session(ctx, tc.ss, tc.cancel)
	if tc.lane != nil {
		ctx, f.up, f.release = s.bridge.enterLane(ctx, tc.ss, tc.lane)
	} else {
		ctx, f.up, f.release = s.bridge.enter(ctx, tc.ss, tc.token)
	}
	f.ctx = ctx
	return f
}

// leave ends what enter began. Once the call has left, what its servers
// send is no longer its client's because of it: the door writes the answer
// after.
func (f *callFrame) leave() {
	f.release()
	f.cancel()
}

// callProxy carries out a call of the mcp tool, any action, with tc.args
// as go-sdk hands them to the tool's handler (validated against its
// schema), and returns its answer.
func (s *Server) callProxy(ctx context.Context, tc *toolCall) *mcp.CallToolResult {
	if tc.lane != nil {
		s.opts.Metrics.fastCall() // nothing after this declines it
	}
	f := s.enter(ctx, tc, "mcp")
	defer f.leave()
	r := f.es.Handle(s.approving(f.ctx, tc.ss), tc.args)
	s.activate(f.ctx, &r.Details)
	f.done(r.Details.Server, r.IsError)
	s.observeProxy(f.ctx, tc, f.span, r, f.began)
	return r.MCP()
}

// answer is a server tool's answer: a result, or, on the fast lane, the
// result as the server wrote it, passed on unchanged.
type answer struct {
	res     *mcp.CallToolResult // nil when raw is set
	raw     json.RawMessage
	rawFail bool // raw's isError
}

func (a answer) isError() bool {
	if a.raw != nil {
		return a.rawFail
	}
	return a.res.IsError
}

// errNoFastPathLate is the error of a call on the lane that the engine
// declined after the lane had written part of its answer.
var errNoFastPathLate = errors.New("switchboard: the server asked for input in the middle of a call on the fast lane; call again")

// callTool carries out a call of a server's tool, dt, for a direct tool
// (proxy mode) or a mirrored one (transparent mode), and returns its
// answer. On the lane the engine may decline the call (see
// gateway.Session.CallToolRaw): callTool then reports false, having done
// nothing the client sees, and go-sdk is to serve the call.
func (s *Server) callTool(ctx context.Context, tc *toolCall, dt directTool) (answer, bool) {
	f := s.enter(ctx, tc, "call")
	defer f.leave()
	raw, res, err := s.send(&f, tc, dt)
	if tc.lane != nil {
		if errors.Is(err, upstream.ErrNoFastPath) {
			if tc.lane.abandon() {
				return answer{}, false
			}
			// A 2026-07-28 server asked for input after it had sent the
			// client log messages on this response: it cannot go the
			// usual way now.
			err = errNoFastPathLate
		}
		s.opts.Metrics.fastCall()
	}
	var ans answer
	if err == nil {
		ans, err = s.bound(dt, raw, res)
	}
	f.done(dt.server, err != nil || ans.isError())
	s.observeDirect(f.ctx, tc, f.span, dt, ans, err, f.began)
	if err != nil {
		return answer{res: errorResult(err)}, true
	}
	return ans, true
}

// send makes the engine call of dt: on the lane as bytes, with the
// arguments as the client wrote them; else with the request's _meta, its
// progress token the bridge's, after the approval an approval rule asks
// for.
func (s *Server) send(f *callFrame, tc *toolCall, dt directTool) (*upstream.RawResult, *mcp.CallToolResult, error) {
	if tc.lane != nil {
		return f.es.CallToolRaw(f.ctx, dt.server, dt.name, tc.args)
	}
	var args any = map[string]any{}
	if len(tc.args) > 0 {
		args = tc.args
	}
	params := &mcp.CallToolParams{Meta: tc.meta, Name: dt.name, Arguments: args}
	if f.up != "" {
		params.Meta = copyMeta(tc.meta)
		params.SetProgressToken(f.up)
	}
	res, err := f.es.CallTool(s.approving(f.ctx, tc.ss), dt.server, params)
	return nil, res, err
}

// bound returns the answer to give for a server tool's result (raw, as the
// server wrote it, or res): in transparent mode a result that fits
// settings.output goes as it came (gateway.Engine.Fits, FitsRaw); any
// other, and a direct tool's always, is bounded (gateway.Engine.Bound).
func (s *Server) bound(dt directTool, raw *upstream.RawResult, res *mcp.CallToolResult) (answer, error) {
	transparent := s.single != ""
	if raw != nil {
		if transparent && s.eng.FitsRaw(raw) {
			return answer{raw: raw.Result, rawFail: raw.IsError}, nil
		}
		var err error
		if res, err = upstream.DecodeResult(raw.Result); err != nil {
			return answer{}, err
		}
	}
	if transparent && s.eng.Fits(res) {
		return answer{res: res}, nil
	}
	res, err := s.eng.Bound("call-"+dt.name, res)
	return answer{res: res}, err
}

func errorResult(err error) *mcp.CallToolResult {
	r := &mcp.CallToolResult{}
	r.SetError(err)
	return r
}

func copyMeta(m mcp.Meta) mcp.Meta {
	out := mcp.Meta{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
