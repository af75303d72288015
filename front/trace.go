package front

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/proxy"
	"github.com/switchboard-mcp/switchboard/telemetry"
)

// A call a client makes is observed twice: a log line at info (client
// session, server, operation, tool, outcome, duration) and, when tracing
// is on, a span. Neither holds the call's arguments or result.

// startSpan starts the span of a client's tool call, when tracing is on
// (Options.Engine.Telemetry, whose upstream spans are its children). The
// client may have sent its own trace context in _meta.
func (s *Server) startSpan(ctx context.Context, tc *toolCall) (context.Context, *telemetry.Span) {
	t := s.opts.Engine.Telemetry
	if t == nil {
		return ctx, nil
	}
	return t.StartRequest(ctx, tc.name, tc.meta, clientID(tc.ss))
}

// clientID names a client session in the log and the span: its id, "" for
// none.
func clientID(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	return ss.ID()
}

// observeProxy records a finished call of the mcp tool: what it did (the
// operation, server and tool it named, never its arguments), sizes and
// spill files.
func (s *Server) observeProxy(ctx context.Context, tc *toolCall, span *telemetry.Span, r *proxy.Result, began time.Time) {
	logging := s.log.Enabled(ctx, slog.LevelInfo)
	tf := s.trace(tc.ss)
	if span == nil && !logging && tf == nil {
		return
	}
	d := r.Details
	var tool string
	if p, err := proxy.Parse(tc.args); err == nil {
		tool = p.Name
	}
	outcome := telemetry.OutcomeOK
	if r.IsError {
		outcome = telemetry.OutcomeError
	}
	tf.write(traceEvent{Event: "call", Via: "mcp", Operation: d.Operation, Server: d.Server, Tool: tool,
		Outcome: outcome, Ms: time.Since(began).Milliseconds()})
	if logging {
		s.log.InfoContext(ctx, "call", "client", clientID(tc.ss), "server", d.Server, "operation", d.Operation, "tool", tool,
			"outcome", outcome, "spills", len(d.Spills), "ms", time.Since(began).Milliseconds())
	}
	if span == nil {
		return
	}
	span.Set(telemetry.KeyOperation.String(d.Operation), telemetry.KeyRequestBytes.Int(len(tc.args)),
		telemetry.KeyResponseBytes.Int(len(r.Text)), telemetry.KeySpills.Int(len(d.Spills)))
	if d.Server != "" {
		span.Set(telemetry.KeyServer.String(d.Server))
	}
	if tool != "" {
		span.Set(telemetry.KeyTargetTool.String(tool))
	}
	errType := ""
	if r.IsError {
		errType = "error_result"
	}
	span.End(outcome, errType)
}

// observeDirect records a finished call of a direct or mirrored tool,
// which answered ans, or failed with err.
func (s *Server) observeDirect(ctx context.Context, tc *toolCall, span *telemetry.Span, dt directTool, ans answer, err error, began time.Time) {
	outcome, errType := telemetry.OutcomeOK, ""
	switch {
	case err != nil:
		var e *upstream.Error
		outcome, errType = telemetry.OutcomeError, "error"
		if errors.As(err, &e) {
			errType = string(e.Class)
		}
	case ans.isError():
		outcome = telemetry.OutcomeToolError
	}
	s.log.InfoContext(ctx, "call", "client", clientID(tc.ss), "server", dt.server, "operation", "call", "tool", dt.name,
		"outcome", outcome, "ms", time.Since(began).Milliseconds())
	s.trace(tc.ss).write(traceEvent{Event: "call", Via: "direct", Operation: "call", Server: dt.server, Tool: dt.name,
		Outcome: outcome, ErrorType: errType, Ms: time.Since(began).Milliseconds()})
	if span == nil {
		return
	}
	span.Set(telemetry.KeyOperation.String("call"), telemetry.KeyServer.String(dt.server), telemetry.KeyTargetTool.String(dt.name))
	switch {
	case err != nil:
	case ans.raw != nil:
		span.Set(telemetry.KeyResponseBytes.Int(len(ans.raw)))
	default:
		if b, err := json.Marshal(ans.res); err == nil {
			span.Set(telemetry.KeyResponseBytes.Int(len(b)))
		}
	}
	span.End(outcome, errType)
}
