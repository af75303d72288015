// Package telemetry records Switchboard's OpenTelemetry traces: a span for
// each request a client makes of the gateway, a span for each request the
// gateway makes of an upstream server (and for each connection it opens),
// and the W3C trace context passed on to upstream servers, as a
// traceparent header to HTTP servers and as _meta.traceparent to every
// server.
//
// Spans carry names, sizes, outcomes and events, never a request's
// arguments, a result, a header or an error's text (which may echo either).
// A tracer made with Redacting also cleans every name and string
// attribute it records (a tool's name comes from its server, which may put
// anything there).
//
// A nil *Tracer records nothing, and every hook returns at once: a gateway
// with no exporter configured pays one nil check per hook.
package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Scope is the instrumentation scope of Switchboard's spans.
const Scope = "github.com/switchboard-mcp/switchboard"

// Attribute keys. The mcp.* and gen_ai.* keys follow OpenTelemetry's
// semantic conventions for MCP; the switchboard.* keys are the gateway's.
const (
	KeyMethod        = attribute.Key("mcp.method.name")
	KeyTool          = attribute.Key("gen_ai.tool.name")
	KeySession       = attribute.Key("mcp.session.id")
	KeyErrorType     = attribute.Key("error.type")
	KeyServer        = attribute.Key("switchboard.server")
	KeyOperation     = attribute.Key("switchboard.operation")
	KeyTargetTool    = attribute.Key("switchboard.tool") // the upstream tool an mcp call named
	KeyOutcome       = attribute.Key("switchboard.outcome")
	KeyRequestBytes  = attribute.Key("switchboard.request.bytes")
	KeyResponseBytes = attribute.Key("switchboard.response.bytes")
	KeySpills        = attribute.Key("switchboard.spills")
	KeyTransport     = attribute.Key("switchboard.transport")
	KeyAttempt       = attribute.Key("switchboard.attempt")
)

// Outcomes.
const (
	OutcomeOK        = "ok"
	OutcomeToolError = "tool_error" // the tool answered with isError
	OutcomeError     = "error"
)

// Tracer makes Switchboard's spans with an OpenTelemetry tracer. A nil
// *Tracer records nothing.
type Tracer struct {
	t      trace.Tracer
	prop   propagation.TraceContext
	redact func(string) string // nil: text is recorded as it is
}

// New returns a tracer over tp, or nil when tp is nil. A Go host that has
// its own tracer provider passes it here.
func New(tp trace.TracerProvider) *Tracer {
	if tp == nil {
		return nil
	}
	return &Tracer{t: tp.Tracer(Scope)}
}

// Redacting returns a tracer like t whose spans have redact applied to
// their names and to the values of their string attributes, events' too:
// the gateway passes the function that replaces the secret values it
// knows. A nil t gives nil.
func (t *Tracer) Redacting(redact func(string) string) *Tracer {
	if t == nil {
		return nil
	}
	cp := *t
	cp.redact = redact
	return &cp
}

// clean returns kv with redact applied to string values.
func clean(redact func(string) string, kv []attribute.KeyValue) []attribute.KeyValue {
	if redact == nil {
		return kv
	}
	var out []attribute.KeyValue
	for i, a := range kv {
		if a.Value.Type() != attribute.STRING {
			continue
		}
		if v := redact(a.Value.AsString()); v != a.Value.AsString() {
			if out == nil {
				out = slices.Clone(kv)
			}
			out[i] = a.Key.String(v)
		}
	}
	if out == nil {
		return kv
	}
	return out
}

// name returns a span's name, cleaned.
func (t *Tracer) name(n string) string {
	if t.redact == nil {
		return n
	}
	return t.redact(n)
}

// Span is one span in progress. A nil *Span does nothing.
type Span struct {
	s      trace.Span
	redact func(string) string // the tracer's
}

// Set adds attributes.
func (s *Span) Set(kv ...attribute.KeyValue) {
	if s != nil {
		s.s.SetAttributes(clean(s.redact, kv)...)
	}
}

// Event records an event on the span.
func (s *Span) Event(name string, kv ...attribute.KeyValue) {
	if s != nil {
		s.s.AddEvent(name, trace.WithAttributes(clean(s.redact, kv)...))
	}
}

// End ends the span with an outcome; errType classifies an error (a
// class, a JSON-RPC code), never its text.
func (s *Span) End(outcome, errType string) {
	if s == nil {
		return
	}
	s.s.SetAttributes(KeyOutcome.String(outcome))
	if outcome == OutcomeError {
		s.s.SetStatus(codes.Error, "")
		if errType != "" {
			s.s.SetAttributes(KeyErrorType.String(errType))
		}
	}
	s.s.End()
}

// StartRequest starts the span of a request a client made of the gateway
// (name is the tool the client called), as a child of the trace context
// the client sent in _meta, if any.
func (t *Tracer) StartRequest(ctx context.Context, name string, meta mcp.Meta, session string) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	if len(meta) > 0 {
		ctx = t.prop.Extract(ctx, metaCarrier(meta))
	}
	kv := []attribute.KeyValue{KeyMethod.String("tools/call"), KeyTool.String(name)}
	if session != "" {
		kv = append(kv, KeySession.String(session))
	}
	ctx, s := t.t.Start(ctx, t.name("tools/call "+name), trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(clean(t.redact, kv)...))
	return ctx, &Span{s, t.redact}
}

// StartConnect starts the span of one connection attempt to a server. The
// attempt runs on its own context: parent is the span of the request that
// caused it, if any.
func (t *Tracer) StartConnect(ctx context.Context, parent trace.SpanContext, server, transport string) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	if parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, parent)
	}
	ctx, s := t.t.Start(ctx, t.name("connect "+server), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(clean(t.redact, []attribute.KeyValue{KeyServer.String(server), KeyTransport.String(transport)})...))
	return ctx, &Span{s, t.redact}
}

// StartReconnect starts the span of an automatic reconnection of a server,
// whose attempts are its events and children.
func (t *Tracer) StartReconnect(ctx context.Context, server string) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	ctx, s := t.t.Start(ctx, t.name("reconnect "+server), trace.WithAttributes(clean(t.redact, []attribute.KeyValue{KeyServer.String(server)})...))
	return ctx, &Span{s, t.redact}
}

// Event records an event on the span in ctx, if one is recording: a
// retry, a lost connection.
func Event(ctx context.Context, name string, kv ...attribute.KeyValue) {
	if s := trace.SpanFromContext(ctx); s.IsRecording() {
		s.AddEvent(name, trace.WithAttributes(kv...))
	}
}

// From returns the span context in ctx, to parent work that runs on a
// context of its own.
func From(ctx context.Context) trace.SpanContext { return trace.SpanContextFromContext(ctx) }

// Middleware returns go-sdk sending middleware for the client of one
// server: each request it sends gets a span (a child of the span in its
// context) and carries the trace context in _meta.traceparent.
// Notifications pass untouched. It returns nil for a nil Tracer.
func (t *Tracer) Middleware(server string) mcp.Middleware {
	if t == nil {
		return nil
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			return t.upstream(ctx, server, method, req, next)
		}
	}
}

func (t *Tracer) upstream(ctx context.Context, server, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	name := method
	kv := []attribute.KeyValue{KeyServer.String(server), KeyMethod.String(method)}
	if p := callParams(req); p != nil {
		name += " " + p.Name
		kv = append(kv, KeyTool.String(p.Name))
	}
	ctx, s := t.t.Start(ctx, t.name(name), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(clean(t.redact, kv)...))
	span := &Span{s, t.redact}
	req = t.withContext(ctx, req)
	span.Set(KeyRequestBytes.Int(size(req.GetParams())))
	res, err := next(ctx, method, req)
	switch {
	case err != nil:
		span.End(OutcomeError, errorType(ctx, err))
	default:
		span.Set(KeyResponseBytes.Int(size(res)))
		if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
			span.End(OutcomeToolError, "")
		} else {
			span.End(OutcomeOK, "")
		}
	}
	return res, err
}

// withContext returns req with the trace context of ctx in its _meta. A
// tools/call request is copied first: its params may be a caller's.
func (t *Tracer) withContext(ctx context.Context, req mcp.Request) mcp.Request {
	params := req.GetParams()
	if params == nil {
		return req
	}
	if p := callParams(req); p != nil {
		r := req.(*mcp.ClientRequest[mcp.Params])
		cp, pc := *r, *p
		cp.Params = &pc
		req, params = &cp, &pc
	}
	meta := map[string]any{}
	for k, v := range params.GetMeta() {
		meta[k] = v
	}
	t.prop.Inject(ctx, metaCarrier(meta))
	params.SetMeta(meta)
	return req
}

// callParams returns the params of a tools/call request, or nil.
func callParams(req mcp.Request) *mcp.CallToolParams {
	if r, ok := req.(*mcp.ClientRequest[mcp.Params]); ok {
		p, _ := r.Params.(*mcp.CallToolParams)
		return p
	}
	return nil
}

// InjectHTTP sets the traceparent header of an outgoing HTTP request from
// its context.
func (t *Tracer) InjectHTTP(ctx context.Context, h propagation.HeaderCarrier) {
	if t != nil {
		t.prop.Inject(ctx, h)
	}
}

// size is the length of v as JSON, or -1.
func size(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return -1
	}
	return len(b)
}

// errorType classifies an error without its text.
func errorType(ctx context.Context, err error) string {
	var wire *jsonrpc.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &wire):
		return "jsonrpc"
	case errors.Is(err, mcp.ErrConnectionClosed):
		return "connection_closed"
	}
	return "transport"
}

// metaCarrier carries the trace context in an MCP _meta object.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
