package gateway

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/proxy"
)

// poolCall makes a tool call and, with Options.OnCall, reports it (see
// proxy.CallRecord: sizes and outcome, never the arguments or the result).
func (e *Engine) poolCall(ctx context.Context, server string, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if e.opts.OnCall == nil {
		return e.pool.Call(ctx, server, params)
	}
	start := time.Now()
	res, err := e.pool.Call(ctx, server, params)
	c := proxy.CallRecord{Server: server, Tool: params.Name, Start: start, Duration: time.Since(start), Outcome: proxy.CallOK,
		ArgsBytes: jsonSize(params.Arguments)}
	switch {
	case err != nil && ctx.Err() != nil:
		c.Outcome, c.ErrorClass = proxy.CallCanceled, errorClass(err)
	case err != nil:
		c.Outcome, c.ErrorClass = proxy.CallFailed, errorClass(err)
	default:
		c.ResultBytes = jsonSize(res)
		if res.IsError {
			c.Outcome = proxy.CallError
		}
	}
	e.opts.OnCall(c)
	return res, err
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
