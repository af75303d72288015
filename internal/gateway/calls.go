package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/identity"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// poolCall makes a tool call of t (nil if the catalog does not know it)
// and, with Options.OnCall, reports it (see proxy.CallRecord: sizes and
// outcome, never the arguments or the result).
func (e *Engine) poolCall(ctx context.Context, server string, t *mcp.Tool, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	call := e.pool.Call
	if rawCallable(t, params) {
		call = e.callRaw
	}
	check := func(res *mcp.CallToolResult) *mcp.CallToolResult {
		ct := t
		if ct == nil || ct.Name != params.Name {
			ct = e.listedTool(server, params.Name) // a direct tool's call comes without it
		}
		return e.checkOutput(server, ct, res)
	}
	if e.opts.OnCall == nil {
		res, err := call(ctx, server, params)
		if err == nil {
			res = check(res)
		}
		return res, err
	}
	start := time.Now()
	res, err := call(ctx, server, params)
	if err == nil {
		res = check(res)
	}
	resultBytes, isError := 0, false
	if err == nil {
		resultBytes, isError = jsonSize(res), res.IsError
	}
	e.reportCall(ctx, server, params.Name, start, jsonSize(params.Arguments), resultBytes, isError, err)
	return res, err
}

// rawCallable reports whether a call may go on the pool's fast path
// (callRaw): a call of a tool the catalog knows without an output schema
// (whose result checkOutput checks, decoded), with a name and arguments
// only (no _meta: no progress token).
func rawCallable(t *mcp.Tool, params *mcp.CallToolParams) bool {
	return t != nil && t.Name == params.Name && t.OutputSchema == nil && len(params.Meta) == 0
}

// callRaw is pool.Call on the pool's fast path (upstream.Pool.CallToolRaw)
// where the server's connection takes the call, and pool.Call where it
// does not: the result is the same, read without go-sdk's client, whose
// decoding of a result leaves some 100 KB of garbage.
func (e *Engine) callRaw(ctx context.Context, server string, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	var args json.RawMessage
	if params.Arguments != nil {
		b, err := argsJSON(params.Arguments) // as go-sdk's client encodes them
		if err != nil {
			return e.pool.Call(ctx, server, params)
		}
		args = b
	}
	raw, res, err := e.pool.CallToolRaw(ctx, server, params.Name, args)
	switch {
	case errors.Is(err, upstream.ErrNoFastPath):
		return e.pool.Call(ctx, server, params)
	case err != nil:
		return nil, err
	case raw != nil:
		return raw.Decode()
	}
	return res, nil
}

// encodedArgs are a call's arguments as the engine encoded them: compact
// JSON of an object.
type encodedArgs []byte

// MarshalJSON returns the bytes as they are.
func (a encodedArgs) MarshalJSON() ([]byte, error) { return a, nil }

// argsJSON encodes a call's arguments as go-sdk's client would: bytes the
// engine encoded itself (callNamed) as they are, anything else with
// encoding/json (which compacts raw bytes from a client).
func argsJSON(v any) ([]byte, error) {
	if b, ok := v.(encodedArgs); ok {
		return b, nil
	}
	return json.Marshal(v)
}

// reportCall tells Options.OnCall of a call that was sent.
func (e *Engine) reportCall(ctx context.Context, server, tool string, start time.Time, argsBytes, resultBytes int, isError bool, err error) {
	c := proxy.CallRecord{Server: server, Tool: tool, Start: start, Duration: time.Since(start), Outcome: proxy.CallOK,
		ArgsBytes: argsBytes}
	if u := identity.From(ctx); u != nil {
		c.User = u.Subject
	}
	switch {
	case err != nil && ctx.Err() != nil:
		c.Outcome, c.ErrorClass = proxy.CallCanceled, errorClass(err)
	case err != nil:
		c.Outcome, c.ErrorClass = proxy.CallFailed, errorClass(err)
	default:
		c.ResultBytes = resultBytes
		if isError {
			c.Outcome = proxy.CallError
		}
	}
	e.opts.OnCall(c)
}

func jsonSize(v any) int {
	if v == nil {
		return 0
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}
