package front

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/gateway"
)

// Metrics counts calls, errors and latency per server, and reports
// connection states, in the Prometheus text format. A nil *Metrics counts
// nothing.
type Metrics struct {
	mu    sync.Mutex
	eng   *gateway.Engine // whose servers' states are reported; nil until attached
	calls map[callKey]*series
	fast  atomic.Uint64 // calls served on the fast lane
}

type callKey struct{ kind, server string }

type series struct {
	calls, errors uint64
	buckets       []uint64 // counts per latencyBuckets bound
	sum           float64  // seconds
}

// latencyBuckets are the histogram's upper bounds in seconds.
var latencyBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120}

// NewMetrics returns metrics to give a Server (Options.Metrics) and its
// HTTP handler (HTTPOptions.Metrics). They report the connection states of
// the servers of the engine of the Server they are given to.
func NewMetrics() *Metrics {
	return &Metrics{calls: map[callKey]*series{}}
}

// attach makes the metrics report eng's connection states.
func (m *Metrics) attach(eng *gateway.Engine) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.eng = eng
}

// fastCall counts a call served on the fast lane.
func (m *Metrics) fastCall() {
	if m != nil {
		m.fast.Add(1)
	}
}

// start begins timing a call of the given kind ("mcp" for the proxy tool,
// "call" for direct tools); the returned function records its end.
func (m *Metrics) start(kind string) func(server string, isError bool) {
	if m == nil {
		return func(string, bool) {}
	}
	begin := time.Now()
	return func(server string, isError bool) {
		d := time.Since(begin).Seconds()
		m.mu.Lock()
		defer m.mu.Unlock()
		k := callKey{kind, server}
		s := m.calls[k]
		if s == nil {
			s = &series{buckets: make([]uint64, len(latencyBuckets))}
			m.calls[k] = s
		}
		s.calls++
		if isError {
			s.errors++
		}
		s.sum += d
		for i, b := range latencyBuckets {
			if d <= b {
				s.buckets[i]++
			}
		}
	}
}

// ServeHTTP writes the metrics.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	var b strings.Builder
	m.writeCalls(&b)
	m.writeStates(r.Context(), &b)
	fmt.Fprint(w, b.String())
}

func (m *Metrics) writeCalls(b *strings.Builder) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]callKey, 0, len(m.calls))
	for k := range m.calls {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].kind != keys[j].kind {
			return keys[i].kind < keys[j].kind
		}
		return keys[i].server < keys[j].server
	})
	b.WriteString("# HELP switchboard_calls_total Tool calls handled, by kind (mcp: the proxy tool; call: a direct tool) and server.\n# TYPE switchboard_calls_total counter\n")
	for _, k := range keys {
		fmt.Fprintf(b, "switchboard_calls_total{kind=%q,server=%q} %d\n", k.kind, k.server, m.calls[k].calls)
	}
	fmt.Fprintf(b, "# HELP switchboard_fast_calls_total Tool calls served on the fast lane: of transparent mode, direct tools and the mcp tool (docs/serve.md).\n# TYPE switchboard_fast_calls_total counter\nswitchboard_fast_calls_total %d\n", m.fast.Load())
	b.WriteString("# HELP switchboard_call_errors_total Tool calls that ended in an error result.\n# TYPE switchboard_call_errors_total counter\n")
	for _, k := range keys {
		fmt.Fprintf(b, "switchboard_call_errors_total{kind=%q,server=%q} %d\n", k.kind, k.server, m.calls[k].errors)
	}
	b.WriteString("# HELP switchboard_call_duration_seconds Latency of tool calls.\n# TYPE switchboard_call_duration_seconds histogram\n")
	for _, k := range keys {
		s := m.calls[k]
		for i, le := range latencyBuckets {
			fmt.Fprintf(b, "switchboard_call_duration_seconds_bucket{kind=%q,server=%q,le=\"%g\"} %d\n", k.kind, k.server, le, s.buckets[i])
		}
		fmt.Fprintf(b, "switchboard_call_duration_seconds_bucket{kind=%q,server=%q,le=\"+Inf\"} %d\n", k.kind, k.server, s.calls)
		fmt.Fprintf(b, "switchboard_call_duration_seconds_sum{kind=%q,server=%q} %g\n", k.kind, k.server, s.sum)
		fmt.Fprintf(b, "switchboard_call_duration_seconds_count{kind=%q,server=%q} %d\n", k.kind, k.server, s.calls)
	}
}

func (m *Metrics) writeStates(ctx context.Context, b *strings.Builder) {
	b.WriteString("# HELP switchboard_server_state Connection state of each configured server (1 for its current state).\n# TYPE switchboard_server_state gauge\n")
	m.mu.Lock()
	eng := m.eng
	m.mu.Unlock()
	if eng == nil {
		return
	}
	for _, st := range eng.Status(ctx) {
		fmt.Fprintf(b, "switchboard_server_state{server=%q,state=%q} 1\n", st.Name, st.State)
	}
	b.WriteString("# HELP switchboard_audit_write_failures_total Audit records this process failed to write (its log says why).\n# TYPE switchboard_audit_write_failures_total counter\n")
	fmt.Fprintf(b, "switchboard_audit_write_failures_total %d\n", eng.AuditFailures())
}
