package front

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit/otlptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/telemetry"
)

// A canary argument and a secret header value must never reach a span.
const (
	traceCanary = "CANARY-ARG-5d1e9c"
	traceSecret = "SECRET-TOKEN-0a7f3b22"
)

// seen is what an HTTP upstream saw of a call's trace context.
type seen struct {
	mu                    sync.Mutex
	header, meta, authHdr string
}

// tracedHTTPUpstream is a go-sdk Streamable HTTP server whose tool "echo"
// records the traceparent header and _meta.traceparent of its request.
func tracedHTTPUpstream(t *testing.T) (string, *seen) {
	s := &seen{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(_ context.Context, req *mcp.CallToolRequest, a struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			s.mu.Lock()
			s.header = req.Extra.Header.Get("traceparent")
			s.authHdr = req.Extra.Header.Get("Authorization")
			s.meta, _ = req.Params.Meta["traceparent"].(string)
			s.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + a.Text}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL, s
}

func TestTraces(t *testing.T) {
	recv := otlptest.New(t)
	tracer, stop, err := telemetry.Open(t.Context(), telemetry.Config{Endpoint: recv.URL, Version: "test"})
	if err != nil || tracer == nil {
		t.Fatalf("telemetry.Open = %v, %v", tracer, err)
	}
	webURL, web := tracedHTTPUpstream(t)
	path, args, env := testserver.Command(testserver.Meta)
	servers := map[string]def{
		"web":   {"url": webURL, "headers": map[string]string{"Authorization": "Bearer ${TRACE_TOKEN}"}},
		"local": {"command": path, "args": args, "env": env},
	}
	lookup := func(k string) (string, bool) {
		if k == "TRACE_TOKEN" {
			return traceSecret, true
		}
		return "", false
	}
	// An in-memory (packaged) server whose tool "meta" answers with the
	// request's _meta.
	mem := mcp.NewServer(&mcp.Implementation{Name: "mem", Version: "1"}, nil)
	mcp.AddTool(mem, &mcp.Tool{Name: "meta", Description: "Answers with the request's _meta."},
		func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
			b, _ := json.Marshal(req.Params.Meta)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
		})
	g := tracedGateway(t, servers, lookup, tracer, host.Server{Name: "mem", Server: mem})
	cs := g.connect(t, nil)

	// The client's own trace: the gateway's span must join it.
	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	call := func(args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: args,
			Meta: mcp.Meta{"traceparent": "00-" + clientTrace + "-" + clientSpan + "-01"}})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError {
			t.Fatalf("call %v: %s", args, text)
		}
		return text
	}
	call(map[string]any{"tool": "echo", "server": "web", "args": map[string]any{"text": traceCanary}})
	localText := call(map[string]any{"tool": "meta", "server": "local", "args": map[string]any{"canary": traceCanary}})
	memText := call(map[string]any{"tool": "meta", "server": "mem", "args": map[string]any{"canary": traceCanary}})

	g.srv.Close()
	stop() // sends what is buffered

	spans := recv.Spans()
	byName := map[string][]otlptest.Span{}
	byID := map[string]otlptest.Span{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
		byID[s.SpanID] = s
	}
	one := func(name string) otlptest.Span {
		t.Helper()
		if len(byName[name]) != 1 {
			var names []string
			for _, s := range spans {
				names = append(names, s.Name)
			}
			t.Fatalf("spans named %q: %d, want 1; got spans %q", name, len(byName[name]), names)
		}
		return byName[name][0]
	}
	gateways := byName["tools/call mcp"]
	if len(gateways) != 3 {
		t.Fatalf("gateway spans: %d, want 3", len(gateways))
	}
	for _, s := range gateways {
		if s.TraceID != clientTrace || s.Parent != clientSpan {
			t.Errorf("gateway span in trace %s under %s, want the client's %s under %s", s.TraceID, s.Parent, clientTrace, clientSpan)
		}
		if s.Attrs["switchboard.operation"] != "call" || s.Attrs["switchboard.outcome"] != "ok" {
			t.Errorf("gateway span attributes %v", s.Attrs)
		}
	}
	metaSpans := map[string]otlptest.Span{}
	for _, s := range byName["tools/call meta"] {
		metaSpans[s.Attrs["switchboard.server"]] = s
	}
	for _, c := range []struct{ name, server, tool string }{{"tools/call echo", "web", "echo"}, {"tools/call meta", "local", "meta"}, {"tools/call meta", "mem", "meta"}} {
		up, ok := metaSpans[c.server]
		if c.server == "web" {
			up, ok = one(c.name), true
		}
		if !ok {
			t.Fatalf("no span %s for %s", c.name, c.server)
		}
		parent, ok := byID[up.Parent]
		if !ok || parent.Name != "tools/call mcp" || parent.Attrs["switchboard.server"] != c.server {
			t.Errorf("%s: parent %+v, want the gateway span of the call to %s", c.name, parent, c.server)
		}
		if up.TraceID != clientTrace {
			t.Errorf("%s: trace %s, want %s", c.name, up.TraceID, clientTrace)
		}
		want := map[string]string{"switchboard.server": c.server, "gen_ai.tool.name": c.tool, "mcp.method.name": "tools/call", "switchboard.outcome": "ok"}
		for k, v := range want {
			if up.Attrs[k] != v {
				t.Errorf("%s: %s = %q, want %q", c.name, k, up.Attrs[k], v)
			}
		}
		if up.Attrs["switchboard.request.bytes"] == "" || up.Attrs["switchboard.response.bytes"] == "" {
			t.Errorf("%s: no sizes in %v", c.name, up.Attrs)
		}
		// The connection was opened for this call: its span is a child
		// of the same gateway span, and the initialize request its child.
		conn := one("connect " + c.server)
		if conn.Parent != up.Parent {
			t.Errorf("connect %s: parent %s, want the gateway span %s", c.server, conn.Parent, up.Parent)
		}
	}
	// The handshake (initialize, or server/discover on 2026-07-28) is a
	// child of a connect span.
	handshakes := map[string]bool{}
	for _, s := range append(byName["initialize"], byName["server/discover"]...) {
		p := byID[s.Parent]
		if !strings.HasPrefix(p.Name, "connect ") {
			t.Errorf("%s span under %q, want a connect span", s.Name, p.Name)
		}
		handshakes[s.Attrs["switchboard.server"]] = true
	}
	if !handshakes["web"] || !handshakes["local"] || !handshakes["mem"] {
		t.Errorf("handshake spans for %v, want web, local and mem", handshakes)
	}

	// The trace context reached both servers, naming the upstream span.
	echo := one("tools/call echo")
	wantTP := "00-" + clientTrace + "-" + echo.SpanID + "-01"
	web.mu.Lock()
	if web.header != wantTP || web.meta != wantTP {
		t.Errorf("HTTP upstream saw traceparent header %q and _meta %q, want %q", web.header, web.meta, wantTP)
	}
	if web.authHdr != "Bearer "+traceSecret {
		t.Errorf("HTTP upstream saw Authorization %q: the secret header was not sent", web.authHdr)
	}
	web.mu.Unlock()
	for server, text := range map[string]string{"local": localText, "mem": memText} {
		wantTP = "00-" + clientTrace + "-" + metaSpans[server].SpanID + "-01"
		if !strings.Contains(text, `"traceparent":"`+wantTP+`"`) {
			t.Errorf("%s upstream's _meta: %s, want traceparent %s", server, text, wantTP)
		}
	}

	for _, s := range []string{traceCanary, traceSecret} {
		if recv.Contains(s) {
			t.Errorf("an exported span holds %q", s)
		}
	}
}

// tracedGateway is a front over an engine over servers, with tracer
// (nil: none).
func tracedGateway(t testing.TB, servers map[string]def, lookup func(string) (string, bool), tracer *telemetry.Tracer, packaged ...host.Server) *testGateway {
	t.Helper()
	home := t.TempDir()
	d := config.Dirs{Home: home}
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	os.MkdirAll(filepath.Dir(d.UserFile()), 0o755)
	if err := os.WriteFile(d.UserFile(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Load(d)
	if cfg.Err() != nil || len(cfg.Errors()) > 0 {
		t.Fatalf("config: %v %v", cfg.Err(), cfg.Errors())
	}
	srv, err := New(t.Context(), cfg, &Options{Engine: switchboard.Options{SpillDir: filepath.Join(home, "spill"), Lookup: lookup, Telemetry: tracer, Servers: packaged}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &testGateway{srv: srv}
}

// BenchmarkTracing is a call of the mcp tool through the gateway, in
// process, to the fixture over stdio, with tracing off (no exporter: the
// default) and on (exporting to a receiver in the test). Compare the two
// ns/op: "off" is the cost every user pays.
func BenchmarkTracing(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			var tracer *telemetry.Tracer
			if on {
				recv := otlptest.New(b)
				t, stop, err := telemetry.Open(b.Context(), telemetry.Config{Endpoint: recv.URL})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(stop)
				tracer = t
			}
			g := tracedGateway(b, map[string]def{"f": fixture()}, nil, tracer)
			inProcess(b, g.srv.MCP(), subject{name: name, tool: "mcp", args: mcpArgs("f")})
		})
	}
}

// With no tracer, the gateway makes no spans and sends no trace context.
func TestNoTraces(t *testing.T) {
	path, args, env := testserver.Command(testserver.Meta)
	g := newGateway(t, map[string]def{"local": {"command": path, "args": args, "env": env}}, nil)
	cs := g.connect(t, nil)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"tool": "meta", "server": "local"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; strings.Contains(text, "traceparent") {
		t.Errorf("without a tracer the server got a traceparent: %s", text)
	}
}
