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
	resultBytes, isError := 0, false
	if err == nil {
		resultBytes, isError = jsonSize(res), res.IsError
	}
	e.reportCall(ctx, server, params.Name, start, jsonSize(params.Arguments), resultBytes, isError, err)
	return res, err
}

// reportCall tells Options.OnCall of a call that was sent.
func (e *Engine) reportCall(ctx context.Context, server, tool string, start time.Time, argsBytes, resultBytes int, isError bool, err error) {
	c := proxy.CallRecord{Server: server, Tool: tool, Start: start, Duration: time.Since(start), Outcome: proxy.CallOK,
		ArgsBytes: argsBytes}
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
