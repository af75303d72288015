package telemetry

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/otlptest"
)

func TestOpen(t *testing.T) {
	recv := otlptest.New(t)
	cases := []struct {
		name     string
		env      map[string]string
		endpoint string
		on       bool
		err      string
	}{
		{"nothing configured", nil, "", false, ""},
		{"settings", nil, recv.URL, true, ""},
		{"environment", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL}, "", true, ""},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": recv.URL + "/v1/traces"}, "", true, ""},
		{"disabled", map[string]string{"OTEL_SDK_DISABLED": "true"}, recv.URL, false, ""},
		{"exporter none", map[string]string{"OTEL_TRACES_EXPORTER": "none"}, recv.URL, false, ""},
		{"grpc", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, recv.URL, false, "http/protobuf only"},
		{"zipkin", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, recv.URL, false, "otlp (or none)"},
		{"bad settings URL", nil, "localhost:4318", false, "is not an http(s) URL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			getenv := func(k string) string { return c.env[k] }
			tr, stop, err := Open(t.Context(), Config{Endpoint: c.endpoint, Getenv: getenv})
			defer stop()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if (tr != nil) != c.on {
				t.Fatalf("tracer %v, want on=%v", tr, c.on)
			}
		})
	}
}

// The settings endpoint is a base URL: spans go to its /v1/traces.
func TestOpenSends(t *testing.T) {
	recv := otlptest.New(t)
	tr, stop, err := Open(t.Context(), Config{Endpoint: recv.URL + "/", Version: "v9"})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tr.StartReconnect(context.Background(), "s")
	span.Event("attempt", KeyAttempt.Int(1))
	span.End(OutcomeOK, "")
	stop()
	spans := recv.Spans()
	if len(spans) != 1 || spans[0].Name != "reconnect s" || spans[0].Attrs["switchboard.outcome"] != "ok" || len(spans[0].Events) != 1 {
		t.Fatalf("spans %+v", spans)
	}
}

// A nil Tracer does nothing, and its spans are nil and safe.
func TestNilTracer(t *testing.T) {
	var tr *Tracer
	ctx := context.Background()
	if c, s := tr.StartRequest(ctx, "mcp", nil, ""); c != ctx || s != nil {
		t.Errorf("StartRequest on nil made something")
	}
	if tr.Middleware("s") != nil {
		t.Errorf("Middleware on nil is not nil")
	}
	var s *Span
	s.Set(KeyServer.String("x"))
	s.Event("e")
	s.End(OutcomeOK, "")
	if New(nil) != nil {
		t.Errorf("New(nil) is not nil")
	}
}

// TestRedacting: a redacting tracer's spans hold no secret in their names,
// string attributes or events' attributes, whichever hook made them; a
// tool's name may be a server's, which may put anything there.
func TestRedacting(t *testing.T) {
	const secret = "sk-canary-123"
	recv := otlptest.New(t)
	base, stop, err := Open(t.Context(), Config{Endpoint: recv.URL})
	if err != nil {
		t.Fatal(err)
	}
	tr := base.Redacting(func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") })
	ctx, span := tr.StartRequest(context.Background(), "tool-"+secret, nil, "session")
	span.Set(KeyTargetTool.String(secret), KeyRequestBytes.Int(3))
	span.Event("retry", KeyServer.String("s-"+secret))
	_, conn := tr.StartConnect(ctx, From(ctx), "srv-"+secret, "stdio")
	conn.End(OutcomeOK, "")
	_, re := tr.StartReconnect(ctx, "srv-"+secret)
	re.End(OutcomeOK, "")
	mw := tr.Middleware("srv-" + secret)
	_, _ = mw(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		return &mcp.CallToolResult{}, nil
	})(ctx, "tools/call", &mcp.ClientRequest[mcp.Params]{Params: &mcp.CallToolParams{Name: "t-" + secret}})
	span.End(OutcomeOK, "")
	stop()
	if recv.Contains(secret) {
		t.Errorf("the secret is in the export: %+v", recv.Spans())
	}
	if spans := recv.Spans(); len(spans) != 4 {
		t.Fatalf("%d spans exported, want 4: %+v", len(spans), spans)
	}
	if tr.Redacting(nil) == nil || (*Tracer)(nil).Redacting(strings.ToUpper) != nil {
		t.Error("Redacting of a tracer is nil, or of nil is not")
	}
}
