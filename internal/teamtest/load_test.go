package teamtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callBound bounds one call: a call that has not ended by then is an
// error (it would otherwise hang the test), not a measurement.
const callBound = 30 * time.Second

// A load is a go-sdk load generator: clients, each in its own MCP
// session through url, calling one tool in a loop until stopped.
type load struct {
	name    string
	url     string
	clients int
	// stateful clients speak 2025-11-25 and keep a session
	// (Mcp-Session-Id); the others speak go-sdk's latest revision to a
	// --stateless server.
	stateful bool
	// params returns the call's parameters for client c's seq-th call,
	// whose unique id is id.
	params func(id string) *mcp.CallToolParams

	httpClient *http.Client
	ok         atomic.Int64 // calls that succeeded so far
}

// A call is one call the load made, or one connection it could not make
// (seq -1).
type call struct {
	client, seq int
	id          string
	start, end  time.Time
	err         error
}

// A run is what a load did.
type run struct {
	name    string
	calls   []call
	elapsed time.Duration
	// perReplica is each replica's count of calls of the load's server,
	// from its /metrics, and of error results.
	perReplica     []replicaCount
	clientsStarted int
}

type replicaCount struct {
	name        string
	calls, errs int64
}

func newLoad(name, url string, clients int, stateful bool, params func(id string) *mcp.CallToolParams) *load {
	return &load{name: name, url: url, clients: clients, stateful: stateful, params: params,
		httpClient: &http.Client{Transport: &http.Transport{MaxIdleConns: 4 * clients, MaxIdleConnsPerHost: 4 * clients, IdleConnTimeout: time.Minute}}}
}

// start runs the load until stop is closed, or each client has made max
// calls (0: no bound). Every client finishes the call it is making when
// stop closes; none is abandoned. wait returns the calls.
func (l *load) start(stop <-chan struct{}, max int) (wait func() run) {
	var wg sync.WaitGroup
	results := make([][]call, l.clients)
	begin := time.Now()
	for c := range l.clients {
		wg.Go(func() { results[c] = l.client(c, stop, max) })
	}
	return func() run {
		wg.Wait()
		r := run{name: l.name, elapsed: time.Since(begin), clientsStarted: l.clients}
		for _, cs := range results {
			r.calls = append(r.calls, cs...)
		}
		l.httpClient.CloseIdleConnections()
		return r
	}
}

// client is one client's loop. After an error it drops its session and
// connects again (a session on a killed replica is gone; a stateless one
// costs an initialize).
func (l *load) client(c int, stop <-chan struct{}, max int) []call {
	var calls []call
	var cs *mcp.ClientSession
	defer func() {
		if cs != nil {
			cs.Close()
		}
	}()
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	for seq := 0; (max == 0 || seq < max) && !stopped(); {
		if cs == nil {
			var err error
			start := time.Now()
			cs, err = l.connect()
			if err != nil {
				calls = append(calls, call{client: c, seq: -1, start: start, end: time.Now(), err: fmt.Errorf("connecting: %w", err)})
				// Not a synchronisation: a pause so that a client whose
				// replica is gone does not spin while nginx notices.
				select {
				case <-stop:
				case <-time.After(50 * time.Millisecond):
				}
				continue
			}
		}
		id := fmt.Sprintf("%s-c%02d-%06d", l.name, c, seq)
		ctx, cancel := context.WithTimeout(context.Background(), callBound)
		start := time.Now()
		res, err := cs.CallTool(ctx, l.params(id))
		end := time.Now()
		cancel()
		if err == nil && res.IsError {
			err = fmt.Errorf("tool error: %s", resultText(res))
		}
		calls = append(calls, call{client: c, seq: seq, id: id, start: start, end: end, err: err})
		seq++
		if err != nil {
			cs.Close()
			cs = nil
			continue
		}
		l.ok.Add(1)
	}
	return calls
}

func (l *load) connect() (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callBound)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "teamtest-load", Version: "1"}, nil)
	opts := &mcp.ClientSessionOptions{}
	if l.stateful {
		opts.ProtocolVersion = "2025-11-25"
	}
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: l.url, HTTPClient: l.httpClient, MaxRetries: -1}, opts)
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// waitOK waits until the load has made n more successful calls than
// when called, or ctx ends.
func (l *load) waitOK(ctx context.Context, n int64) error {
	target := l.ok.Load() + n
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for l.ok.Load() < target {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d successful calls: %w (%d of them made)", n, ctx.Err(), n-(target-l.ok.Load()))
		case <-tick.C:
		}
	}
	return nil
}

// failures returns the calls that failed.
func (r run) failures() []call {
	var f []call
	for _, c := range r.calls {
		if c.err != nil {
			f = append(f, c)
		}
	}
	return f
}

// succeeded returns the ids of the calls that succeeded.
func (r run) succeeded() []string {
	var ids []string
	for _, c := range r.calls {
		if c.err == nil && c.seq >= 0 {
			ids = append(ids, c.id)
		}
	}
	return ids
}

// figures are a run's calls per second and latency percentiles.
type figures struct {
	ok, errs int
	perSec   float64
	p50, p99 time.Duration
}

func (r run) figures() figures {
	var lat []time.Duration
	f := figures{}
	for _, c := range r.calls {
		if c.err != nil {
			f.errs++
			continue
		}
		f.ok++
		lat = append(lat, c.end.Sub(c.start))
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		f.p50 = lat[len(lat)/2]
		f.p99 = lat[min(len(lat)-1, len(lat)*99/100)]
	}
	if r.elapsed > 0 {
		f.perSec = float64(f.ok) / r.elapsed.Seconds()
	}
	return f
}

// measure reads every replica's counters of server before and after fn,
// and sets the run's per-replica counts.
func measure(t *testing.T, reps []*replica, server string, fn func() run) run {
	t.Helper()
	before := make([]replicaCount, len(reps))
	for i, r := range reps {
		calls, errs, err := r.counters()
		if err != nil {
			t.Fatalf("replica %s: %v", r.name, err)
		}
		before[i] = replicaCount{r.name, calls[server], errs[server]}
	}
	res := fn()
	for i, r := range reps {
		calls, errs, err := r.counters()
		if err != nil {
			t.Errorf("replica %s: %v", r.name, err)
			continue
		}
		res.perReplica = append(res.perReplica, replicaCount{r.name, calls[server] - before[i].calls, errs[server] - before[i].errs})
	}
	return res
}

// table prints runs as a table with t.Log and to stdout.
func table(t *testing.T, title string, runs ...run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", title)
	fmt.Fprintf(&b, "%-34s %-8s %8s %9s %8s %8s %7s\n", "run", "replica", "calls", "calls/s", "p50 ms", "p99 ms", "errors")
	for _, r := range runs {
		for _, pr := range r.perReplica {
			fmt.Fprintf(&b, "%-34s %-8s %8d %9.0f %8s %8s %7d\n", r.name, pr.name, pr.calls, float64(pr.calls)/r.elapsed.Seconds(), "", "", pr.errs)
		}
		f := r.figures()
		fmt.Fprintf(&b, "%-34s %-8s %8d %9.0f %8.1f %8.1f %7d\n", r.name, "total", f.ok, f.perSec, ms(f.p50), ms(f.p99), f.errs)
	}
	out := b.String()
	t.Log("\n" + out)
	fmt.Fprint(os.Stdout, out)
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ledger reads the lines the upstream servers recorded, and how often
// each was recorded.
func ledger(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return map[string]int{}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, line := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if line != "" {
			seen[line]++
		}
	}
	return seen
}

// checkOnce checks the idempotency of a run: no call reached an upstream
// server twice, every call that succeeded reached one, and nothing reached
// one that the run did not make.
func checkOnce(t *testing.T, r run, seen map[string]int, prefix string) {
	t.Helper()
	made := map[string]bool{}
	for _, c := range r.calls {
		if c.seq >= 0 {
			made[c.id] = true
		}
	}
	var twice, missing, unknown []string
	for id, n := range seen {
		if !strings.HasPrefix(id, prefix) {
			continue
		}
		if n > 1 {
			twice = append(twice, id+" ×"+strconv.Itoa(n))
		}
		if !made[id] {
			unknown = append(unknown, id)
		}
	}
	for _, id := range r.succeeded() {
		if seen[id] == 0 {
			missing = append(missing, id)
		}
	}
	for what, ids := range map[string][]string{"reached an upstream more than once (replayed)": twice,
		"succeeded but never reached an upstream": missing, "reached an upstream but were never made": unknown} {
		if len(ids) > 0 {
			slices.Sort(ids)
			t.Errorf("%d calls of %s %s: %s", len(ids), r.name, what, strings.Join(ids[:min(len(ids), 10)], ", "))
		}
	}
}

// add adds the calls, time and per-replica counts of o to r.
func (r *run) add(o run) {
	r.calls = append(r.calls, o.calls...)
	r.elapsed += o.elapsed
	if r.perReplica == nil {
		r.perReplica = make([]replicaCount, len(o.perReplica))
		for i, pr := range o.perReplica {
			r.perReplica[i].name = pr.name
		}
	}
	for i, pr := range o.perReplica {
		r.perReplica[i].calls += pr.calls
		r.perReplica[i].errs += pr.errs
	}
}
