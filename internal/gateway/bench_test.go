package gateway

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// BenchmarkProxiedCall measures what the engine adds to a tool call: each
// iteration calls echo on the fixture server once through Engine.Handle
// (parse, resolve from the catalog, call, convert, bound) and once with a
// bare go-sdk client on its own child of the same server, alternating so
// both see the same machine. It reports both latencies' median and p99,
// the added median, and the tool definition's size.
//
//	go test -run '^$' -bench ProxiedCall -benchtime 2000x .
func BenchmarkProxiedCall(b *testing.B) {
	e := newBenchEngine(b)
	ctx := context.Background()
	req := json.RawMessage(`{"tool":"echo","server":"f","args":{"text":"hello"}}`)
	if r := e.Handle(ctx, req); r.IsError || r.Text != "hello" {
		b.Fatalf("warm-up call: %q", r.Text)
	}
	bare := bareFixture(b)
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	var viaEngine, viaSDK []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if r := e.Handle(ctx, req); r.IsError {
			b.Fatal(r.Text)
		}
		viaEngine = append(viaEngine, time.Since(start))
		start = time.Now()
		if _, err := bare.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
		viaSDK = append(viaSDK, time.Since(start))
	}
	b.StopTimer()
	report(b, "engine-", viaEngine)
	report(b, "sdk-", viaSDK)
	b.ReportMetric(float64(quantile(viaEngine, 50)-quantile(viaSDK, 50))/1e3, "added-p50-µs")
	b.ReportMetric(float64(len(e.Tool(ctx).Description)), "description-bytes")
}

// BenchmarkHandleRejected measures a request rejected by validation: the
// cost of the contract alone, with nothing connected.
func BenchmarkHandleRejected(b *testing.B) {
	e := newBenchEngine(b)
	req := json.RawMessage(`{"tool":"echo","search":"x"}`)
	for b.Loop() {
		if r := e.Handle(context.Background(), req); !r.IsError {
			b.Fatal("accepted")
		}
	}
}

func newBenchEngine(b *testing.B) *Engine {
	b.Helper()
	path, args, env := testserver.Command(testserver.Good)
	e := newEngineTB(b, map[string]def{"f": {"command": path, "args": args, "env": env}}, nil)
	return e
}

func bareFixture(b *testing.B) *mcp.ClientSession {
	b.Helper()
	path, args, env := testserver.Command(testserver.Good)
	cmd := exec.Command(path, args...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func report(b *testing.B, prefix string, lat []time.Duration) {
	b.ReportMetric(float64(quantile(lat, 50))/1e3, prefix+"p50-µs")
	b.ReportMetric(float64(quantile(lat, 99))/1e3, prefix+"p99-µs")
}

func quantile(lat []time.Duration, p int) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// BenchmarkCallPolicy measures what policy adds to a call that needs no
// approval, without the call itself: the quarantine lookup, the approval
// rule, and the audit record (encoded and appended to the file, or
// inserted into the shared store's table). Set it against
// BenchmarkProxiedCall's engine-p50-µs for the share of a call. The
// postgres case needs the private server (pgtest); it reports the median
// and p99 of one call's policy work.
//
//	go test -run '^$' -bench 'CallPolicy|ProxiedCall' -benchtime 2000x .
func BenchmarkCallPolicy(b *testing.B) {
	b.Run("file", func(b *testing.B) { benchCallPolicy(b, newBenchEngine(b)) })
	b.Run("postgres", func(b *testing.B) {
		path, args, env := testserver.Command(testserver.Good)
		db := pgtest.DB(b)
		e := engineIn(b, b.TempDir(), map[string]def{"f": {"command": path, "args": args, "env": env}}, nil, &Options{Store: db, StoreKey: testStoreKey})
		benchCallPolicy(b, e)
		// The table's size (with its indexes) per record, for retention.
		var perRecord float64
		if err := db.QueryRow(`SELECT pg_total_relation_size('switchboard_audit')::float8 / count(*) FROM switchboard_audit`).Scan(&perRecord); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(perRecord, "table-bytes/record")
	})
}

func benchCallPolicy(b *testing.B, e *Engine) {
	ctx := context.Background()
	if r := e.Handle(ctx, json.RawMessage(`{"tool":"echo","server":"f","args":{"text":"hello"}}`)); r.IsError {
		b.Fatalf("warm-up call: %q", r.Text)
	}
	ref := proxy.ToolRef{Server: "f", Name: "echo"}
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}
	s := e.def
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		rec, err := s.admit(ctx, ref, nil, params)
		if err != nil {
			b.Fatal(err)
		}
		s.finish(ctx, rec, time.Millisecond, res, nil)
		lat = append(lat, time.Since(start))
	}
	if n := e.AuditFailures(); n > 0 {
		b.Fatalf("%d audit records not written", n)
	}
	report(b, "", lat)
}
