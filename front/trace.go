package front

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/proxy"
	"github.com/switchboard-mcp/switchboard/telemetry"
	"github.com/switchboard-mcp/switchboard/upstream"
)

// startSpan starts the span of a client's tool call, when tracing is on.
// The client may have sent its own trace context in _meta.
func (s *Server) startSpan(ctx context.Context, req *mcp.CallToolRequest) (context.Context, *telemetry.Span) {
	t := s.opts.Telemetry
	if t == nil {
		return ctx, nil
	}
	var session string
	if req.Session != nil {
		session = req.Session.ID()
	}
	return t.StartRequest(ctx, req.Params.Name, req.Params.Meta, session)
}

// endProxySpan ends the span of a call of the mcp tool with what it did:
// the operation, server and tool it named (never its arguments), sizes and
// spill files.
func endProxySpan(span *telemetry.Span, args json.RawMessage, r *switchboard.Result) {
	if span == nil {
		return
	}
	d := r.Details
	span.Set(telemetry.KeyOperation.String(d.Operation), telemetry.KeyRequestBytes.Int(len(args)),
		telemetry.KeyResponseBytes.Int(len(r.Text)), telemetry.KeySpills.Int(len(d.Spills)))
	if d.Server != "" {
		span.Set(telemetry.KeyServer.String(d.Server))
	}
	if req, err := proxy.Parse(args); err == nil && req.Name != "" {
		span.Set(telemetry.KeyTargetTool.String(req.Name))
	}
	if r.IsError {
		span.End(telemetry.OutcomeError, "error_result")
		return
	}
	span.End(telemetry.OutcomeOK, "")
}

// endDirectSpan ends the span of a call of a direct or mirrored tool.
func endDirectSpan(span *telemetry.Span, dt directTool, res *mcp.CallToolResult, err error) {
	if span == nil {
		return
	}
	span.Set(telemetry.KeyOperation.String("call"), telemetry.KeyServer.String(dt.server),
		telemetry.KeyTargetTool.String(dt.name))
	if err != nil {
		var e *upstream.Error
		class := "error"
		if errors.As(err, &e) {
			class = string(e.Class)
		}
		span.End(telemetry.OutcomeError, class)
		return
	}
	if b, err := json.Marshal(res); err == nil {
		span.Set(telemetry.KeyResponseBytes.Int(len(b)))
	}
	if res.IsError {
		span.End(telemetry.OutcomeToolError, "")
		return
	}
	span.End(telemetry.OutcomeOK, "")
}
