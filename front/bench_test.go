package front

// Benchmarks of the gateway against direct access to the same upstream, and
// against the thinnest gateway go-sdk allows (a relay: a go-sdk server whose
// one tool forwards to a go-sdk client). Every row runs real processes: the
// upstream is the fixture server (internal/testkit/testserver, mode good, tool echo)
// over stdio, the gateway is the real switchboard binary (built once with go
// build), and the relay is this test binary in relay mode.
//
// Run them all, side by side, with:
//
//	go test -run '^$' -bench . -benchtime 3000x ./front
//
// See docs/serve.md for figures and how to read them.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// relayEnv selects relay mode when the test binary starts: "stdio" or
// "http" (a relay in front of the fixture server), or "echo-http" (no
// relay: an echo server of its own). See runRelay.
const relayEnv = "SWITCHBOARD_BENCH_RELAY"

// relayMain runs the bare go-sdk relay if the environment asks for it, and
// exits. Call it from TestMain.
func relayMain() {
	mode := os.Getenv(relayEnv)
	if mode == "" {
		return
	}
	if err := runRelay(mode); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runRelay serves one tool, echo, that forwards its arguments to the
// fixture's echo with a go-sdk client, and returns the fixture's result as
// it came: no validation, no bounds, no sessions of its own. In mode
// "echo-http" it answers echo itself, as the fixture does, over HTTP: that
// is direct access to a server over HTTP.
func runRelay(mode string) error {
	ctx := context.Background()
	if mode == "echo-http" {
		s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
		type echoIn struct {
			Text string `json:"text"`
		}
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."},
			func(_ context.Context, _ *mcp.CallToolRequest, a echoIn) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
			})
		return serveHTTP(s)
	}
	path, args, env := testserver.Command(testserver.Good)
	up := exec.Command(path, args...)
	up.Env = os.Environ()
	for k, v := range env {
		up.Env = append(up.Env, k+"="+v)
	}
	up.Env = slices.DeleteFunc(up.Env, func(kv string) bool { return strings.HasPrefix(kv, relayEnv+"=") })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "relay", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: up}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	s := mcp.NewServer(&mcp.Implementation{Name: "relay", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: req.Params.Arguments})
		})
	if mode == "stdio" {
		return s.Run(ctx, &mcp.StdioTransport{})
	}
	return serveHTTP(s)
}

// serveHTTP serves s over Streamable HTTP on a free loopback port, which it
// prints.
func serveHTTP(s *mcp.Server) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "relay: serving http://%s/mcp\n", ln.Addr())
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	return http.Serve(ln, h)
}

// switchboardBinary builds the real binary once, without -race, into the
// user cache directory (go build leaves an up-to-date binary alone).
var switchboardBinary = sync.OnceValues(func() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "switchboard-bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "switchboard")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/switchboard-mcp/switchboard/cmd/switchboard")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building switchboard: %v\n%s", err, out)
	}
	return bin, nil
})

// A subject is one way to reach the fixture's echo tool.
type subject struct {
	name string
	tool string           // tool to call
	args func(int) any    // its arguments for the i-th call
	cmd  func() *exec.Cmd // the process to talk to, or nil for the fixture itself
	http bool             // talk to it over HTTP rather than stdio
}

func echoArgs(i int) any { return map[string]any{"text": "hello " + strconv.Itoa(i)} }

func mcpArgs(server string) func(int) any {
	return func(i int) any {
		return map[string]any{"tool": "echo", "server": server, "args": map[string]any{"text": "hello " + strconv.Itoa(i)}}
	}
}

// fixtureCmd is the fixture server.
func fixtureCmd() *exec.Cmd {
	path, args, env := testserver.Command(testserver.Good)
	cmd := exec.Command(path, args...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// relayCmd is the relay serving over mode ("stdio" or "http"), with env
// added to its environment.
func relayCmd(mode string, env ...string) func() *exec.Cmd {
	return func() *exec.Cmd {
		exe, _ := os.Executable()
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(append(os.Environ(), relayEnv+"="+mode), env...)
		return cmd
	}
}

// switchboardCmd returns a command running `switchboard serve` with n
// fixture servers (f0, f1, …) configured, the given toolPrefix, and args.
func switchboardCmd(b *testing.B, n int, prefix string, args ...string) func() *exec.Cmd {
	bin, err := switchboardBinary()
	if err != nil {
		b.Fatal(err)
	}
	home := b.TempDir()
	path, fargs, fenv := testserver.Command(testserver.Good)
	servers := map[string]any{}
	for i := range n {
		servers["f"+strconv.Itoa(i)] = map[string]any{"command": path, "args": fargs, "env": fenv}
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": servers, "settings": map[string]any{"toolPrefix": prefix}})
	config := filepath.Join(home, "config.json")
	if err := os.WriteFile(config, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return func() *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"serve", "--config", config}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "XDG_CACHE_HOME=", "XDG_STATE_HOME=", "SWITCHBOARD_CONFIG=")
		cmd.Dir = home
		return cmd
	}
}

// benchHTTP is shared by every HTTP client of the benchmarks, with enough
// idle connections for 50 concurrent clients.
var benchHTTP = &http.Client{Transport: &http.Transport{MaxIdleConns: 200, MaxIdleConnsPerHost: 200, IdleConnTimeout: time.Minute}}

// A running HTTP subject: its process and its endpoint.
type running struct {
	cmd *exec.Cmd
	url string
}

var servingURL = regexp.MustCompile(`serving (http://\S+/mcp)`)

// startHTTP starts an HTTP subject and waits for the URL it prints.
func startHTTP(b *testing.B, cmd *exec.Cmd) *running {
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan struct{})
	b.Cleanup(func() {
		// SIGTERM lets switchboard close its servers; the relay just dies.
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	urlc := make(chan string, 1)
	go func() {
		defer close(exited)
		defer cmd.Wait()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingURL.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case url := <-urlc:
		return &running{cmd: cmd, url: url}
	case <-time.After(30 * time.Second):
		b.Fatal("no URL within 30s")
		return nil
	}
}

// connect connects a go-sdk client: to r over HTTP, or by starting cmd
// over stdio.
func connect(b *testing.B, r *running, cmd *exec.Cmd) *mcp.ClientSession {
	var t mcp.Transport
	if r != nil {
		t = &mcp.StreamableClientTransport{Endpoint: r.url, HTTPClient: benchHTTP}
	} else {
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	}
	opts := &mcp.ClientSessionOptions{ProtocolVersion: benchProtocol()}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(), t, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// benchProtocol is the revision the benchmarks' clients ask for:
// $SWITCHBOARD_BENCH_PROTOCOL, else 2025-11-25, which the agents of today
// speak (the TypeScript SDK's newest). "latest" lets go-sdk choose (it
// prefers 2026-07-28). Upstream legs negotiate as they would in use: the
// gateway's at 2025-11-25 (its default over stdio), the relay's at
// 2026-07-28 (go-sdk's).
func benchProtocol() string {
	switch v := os.Getenv("SWITCHBOARD_BENCH_PROTOCOL"); v {
	case "":
		return "2025-11-25"
	case "latest":
		return ""
	default:
		return v
	}
}

// benchCall calls the subject's tool once. It may run on any goroutine.
func benchCall(b *testing.B, cs *mcp.ClientSession, s subject, i int) bool {
	res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: s.tool, Arguments: s.args(i)})
	if err != nil {
		b.Errorf("%s: %v", s.name, err)
		return false
	}
	if res.IsError {
		b.Errorf("%s: %s", s.name, text(res))
		return false
	}
	return true
}

// latencies summarizes per-call durations.
type latencies []time.Duration

func (l latencies) pct(p float64) time.Duration {
	s := slices.Clone(l)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func µs(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// result is one subject's figures.
type result struct {
	p50, p99 time.Duration
	perSec   float64
	cpu      time.Duration // CPU time of the subject's process per call
}

// cpuTime returns the CPU time p has used, user and system, all threads
// included, from /proc/PID/stat (in clock ticks of 10ms: measure many
// calls). It returns 0 where there is no /proc.
func cpuTime(p *os.Process) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: count fields
	// after it. utime and stime are fields 14 and 15.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// An endpoint is a started subject and its sessions.
type endpoint struct {
	subject
	run      *running // nil for stdio subjects
	cmd      func() *exec.Cmd
	proc     *os.Process // the subject's process
	sessions []*mcp.ClientSession
}

// openEndpoints starts the subjects and connects n sessions to each (one,
// shared, for stdio subjects), warming each up.
func openEndpoints(b *testing.B, subjects []subject, n int) []*endpoint {
	var out []*endpoint
	for _, s := range subjects {
		e := &endpoint{subject: s, cmd: s.cmd}
		if e.cmd == nil {
			e.cmd = fixtureCmd
		}
		if s.http {
			e.run = startHTTP(b, e.cmd())
			e.proc = e.run.cmd.Process
		}
		for i := range n {
			if s.http {
				e.sessions = append(e.sessions, connect(b, e.run, nil))
			} else if i == 0 {
				cmd := e.cmd()
				e.sessions = append(e.sessions, connect(b, nil, cmd))
				e.proc = cmd.Process
			} else {
				e.sessions = append(e.sessions, e.sessions[0])
			}
			for j := range max(10, 200/n) { // warm up: connect upstream, fill caches, grow pools
				if !benchCall(b, e.sessions[i], s, j) {
					b.FailNow()
				}
			}
		}
		out = append(out, e)
	}
	return out
}

// burst makes calls calls through e with len(e.sessions) concurrent clients
// and returns their latencies and the time it took.
func (e *endpoint) burst(b *testing.B, calls int) (latencies, time.Duration) {
	clients := len(e.sessions)
	lat := make([]latencies, clients)
	var wg sync.WaitGroup
	t0 := time.Now()
	for c := range clients {
		n := calls / clients
		if c < calls%clients {
			n++
		}
		wg.Go(func() {
			for i := range n {
				t := time.Now()
				if !benchCall(b, e.sessions[c], e.subject, i) {
					return
				}
				lat[c] = append(lat[c], time.Since(t))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(t0)
	var all latencies
	for _, l := range lat {
		all = append(all, l...)
	}
	return all, elapsed
}

// interleave makes b.N calls through each endpoint, in bursts of burst
// calls taken in turn, so that a slow spell of the machine falls on every
// endpoint alike. It returns each endpoint's figures.
func interleave(b *testing.B, eps []*endpoint, burst int) []result {
	lat := make([]latencies, len(eps))
	took := make([]time.Duration, len(eps))
	cpu := make([]time.Duration, len(eps))
	b.ResetTimer()
	for done := 0; done < b.N; done += burst {
		n := min(burst, b.N-done)
		for k := range eps {
			i := (k + done/burst) % len(eps) // rotate who goes first
			c0 := cpuTime(eps[i].proc)
			l, d := eps[i].burst(b, n)
			cpu[i] += cpuTime(eps[i].proc) - c0
			lat[i] = append(lat[i], l...)
			took[i] += d
		}
		if b.Failed() {
			b.FailNow()
		}
	}
	b.StopTimer()
	out := make([]result, len(eps))
	for i := range eps {
		out[i] = result{p50: lat[i].pct(0.5), p99: lat[i].pct(0.99), perSec: float64(len(lat[i])) / took[i].Seconds(),
			cpu: cpu[i] / time.Duration(max(1, len(lat[i])))}
	}
	return out
}

// metric names a subject in a metric unit: no spaces or slashes.
func metric(name, unit string) string {
	return strings.ReplaceAll(name, "/", ":") + "-" + unit
}

// BenchmarkLatency calls echo one call at a time through each subject, in
// turn, and reports the median and 99th percentile per call, and what each
// adds to direct access. The relay is the reference: added latency ÷ the
// relay's is the gateway's cost relative to the thinnest go-sdk gateway.
func BenchmarkLatency(b *testing.B) {
	subjects := []subject{
		{name: "stdio/direct", tool: "echo", args: echoArgs},
		{name: "stdio/relay", tool: "echo", args: echoArgs, cmd: relayCmd("stdio")},
		// The relay with the collector setting serve uses (GOGC=200).
		{name: "stdio/relay-gogc200", tool: "echo", args: echoArgs, cmd: relayCmd("stdio", "GOGC=200")},
		{name: "stdio/switchboard-transparent", tool: "echo", args: echoArgs, cmd: switchboardCmd(b, 1, "none")},
		{name: "stdio/switchboard-mcp", tool: "mcp", args: mcpArgs("f0"), cmd: switchboardCmd(b, 1, "server")},
		{name: "http/relay", tool: "echo", args: echoArgs, cmd: relayCmd("http"), http: true},
		{name: "http/switchboard-transparent", tool: "echo", args: echoArgs, cmd: switchboardCmd(b, 1, "none", "--http", "127.0.0.1:0"), http: true},
		{name: "http/switchboard-mcp", tool: "mcp", args: mcpArgs("f0"), cmd: switchboardCmd(b, 1, "server", "--http", "127.0.0.1:0"), http: true},
	}
	eps := openEndpoints(b, subjects, 1)
	res := interleave(b, eps, 50)
	direct := res[0].p50
	relay := map[string]time.Duration{"stdio": res[1].p50 - direct, "http": res[5].p50 - direct}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%-30s %8s %8s %9s %9s %8s\n", "subject", "p50 µs", "p99 µs", "added µs", "÷ relay", "CPU µs")
	for i, s := range subjects {
		added := res[i].p50 - direct
		ratio := "-"
		if i > 0 && !strings.Contains(s.name, "/relay") {
			r := float64(added) / float64(relay[strings.Split(s.name, "/")[0]])
			ratio = fmt.Sprintf("%.2f", r)
			b.ReportMetric(r, metric(s.name, "÷relay"))
		}
		fmt.Fprintf(&sb, "%-30s %8.0f %8.0f %9.0f %9s %8.0f\n", s.name, µs(res[i].p50), µs(res[i].p99), µs(added), ratio, µs(res[i].cpu))
		b.ReportMetric(µs(res[i].cpu), metric(s.name, "cpu-µs"))
		b.ReportMetric(µs(res[i].p50), metric(s.name, "p50-µs"))
		b.ReportMetric(µs(res[i].p99), metric(s.name, "p99-µs"))
	}
	b.ReportMetric(0, "ns/op")
	if b.N >= 100 {
		b.Log(sb.String())
	}
}

// BenchmarkConcurrency runs 1, 10 and 50 clients calling echo at once
// through each subject and reports calls per second and the 99th
// percentile. Direct clients share one stdio session with the fixture (a
// stdio server has one client); HTTP clients have a session each.
// direct-http is a go-sdk server answering echo itself over HTTP: what
// serving HTTP costs with go-sdk, gateway or not.
func BenchmarkConcurrency(b *testing.B) {
	subjects := []subject{
		{name: "direct", tool: "echo", args: echoArgs},
		{name: "direct-http", tool: "echo", args: echoArgs, cmd: relayCmd("echo-http"), http: true},
		{name: "relay", tool: "echo", args: echoArgs, cmd: relayCmd("http"), http: true},
		{name: "switchboard-transparent", tool: "echo", args: echoArgs, cmd: switchboardCmd(b, 1, "none", "--http", "127.0.0.1:0"), http: true},
		{name: "switchboard-mcp", tool: "mcp", args: mcpArgs("f0"), cmd: switchboardCmd(b, 1, "server", "--http", "127.0.0.1:0"), http: true},
	}
	for _, clients := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			eps := openEndpoints(b, subjects, clients)
			res := interleave(b, eps, max(100, 20*clients))
			var sb strings.Builder
			fmt.Fprintf(&sb, "\n%-24s %8s %9s %9s %9s %8s\n", "subject", "calls/s", "p99 µs", "÷ direct", "÷ d-http", "CPU µs")
			for i, s := range subjects {
				fmt.Fprintf(&sb, "%-24s %8.0f %9.0f %8.0f%% %8.0f%% %8.0f\n", s.name, res[i].perSec, µs(res[i].p99),
					100*res[i].perSec/res[0].perSec, 100*res[i].perSec/res[1].perSec, µs(res[i].cpu))
				b.ReportMetric(res[i].perSec, metric(s.name, "calls/s"))
				b.ReportMetric(µs(res[i].p99), metric(s.name, "p99-µs"))
			}
			b.ReportMetric(0, "ns/op")
			if b.N >= 100 {
				b.Log(sb.String())
			}
		})
	}
}

// BenchmarkRSS measures the resident memory of the real switchboard serve
// --http process with 10 fixture servers configured: idle (nothing
// connected: servers are lazy), and its peak while 10 clients call echo
// on all 10 servers through the mcp tool.
func BenchmarkRSS(b *testing.B) {
	b.Run("switchboard", func(b *testing.B) {
		r := startHTTP(b, switchboardCmd(b, 10, "server", "--http", "127.0.0.1:0")())
		rssMetrics(b, r, 10, func(i int) (string, any) {
			return "mcp", mcpArgs("f" + strconv.Itoa(i%10))(i)
		})
	})
	b.Run("relay", func(b *testing.B) {
		r := startHTTP(b, relayCmd("http")())
		rssMetrics(b, r, 10, func(i int) (string, any) { return "echo", echoArgs(i) })
	})
}

func rssMetrics(b *testing.B, r *running, clients int, req func(int) (string, any)) {
	pid := r.cmd.Process.Pid
	// Idle means settled after start-up, so this waits on purpose.
	time.Sleep(time.Second)
	idle := procKB(b, pid, "VmRSS")
	var wg sync.WaitGroup
	b.ResetTimer()
	for c := range clients {
		cs := connect(b, r, nil)
		wg.Go(func() {
			for i := c; i < b.N+clients*20; i += clients {
				name, args := req(i)
				if !benchCall(b, cs, subject{name: "rss", tool: name, args: func(int) any { return args }}, i) {
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(idle)/1024, "idle-MB")
	b.ReportMetric(float64(procKB(b, pid, "VmHWM"))/1024, "peak-MB")
	b.ReportMetric(float64(procKB(b, pid, "VmRSS"))/1024, "after-MB")
	b.ReportMetric(0, "ns/op")
}

// procKB reads a field of /proc/PID/status, in kB.
func procKB(b *testing.B, pid int, field string) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("reading memory use: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// BenchmarkInProcess runs the gateway inside the test process, behind an
// in-memory transport, in front of the fixture over stdio: run it with
// -cpuprofile or -memprofile to see where the gateway spends its time.
// relay is the bare go-sdk relay, in process too.
func BenchmarkInProcess(b *testing.B) {
	cases := []struct {
		name     string
		settings map[string]any
		tool     string
		args     func(int) any
	}{
		{"transparent", map[string]any{"toolPrefix": "none"}, "echo", echoArgs},
		{"mcp", nil, "mcp", mcpArgs("f")},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			g := newGateway(b, map[string]def{"f": fixture()}, c.settings)
			inProcess(b, g.srv.MCP(), subject{name: c.name, tool: c.tool, args: c.args})
		})
	}
	b.Run("relay", func(b *testing.B) {
		cs := connect(b, nil, fixtureCmd())
		s := mcp.NewServer(&mcp.Implementation{Name: "relay", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: req.Params.Arguments})
			})
		inProcess(b, s, subject{name: "relay", tool: "echo", args: echoArgs})
	})
}

func inProcess(b *testing.B, s *mcp.Server, sub subject) {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(b.Context(), st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: benchProtocol()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	for i := range 200 {
		if !benchCall(b, cs, sub, i) {
			return
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if !benchCall(b, cs, sub, i) {
			return
		}
	}
}

// BenchmarkInProcessHTTP is BenchmarkInProcess over Streamable HTTP with 50
// clients, each a session of its own, calling at once: the gateway's HTTP
// handler on an httptest server, in front of the fixture over stdio. Run
// it with -cpuprofile or -memprofile to see where 50 sessions spend the
// gateway's time (the clients run in the test process too: read the
// server's share). One iteration is one call.
//
//	go test -run '^$' -bench InProcessHTTP -benchtime 5000x -cpuprofile cpu.out ./front
//
// The sub-benchmarks named mcp call the mcp tool in proxy mode instead of
// the tool itself in transparent mode.
func BenchmarkInProcessHTTP(b *testing.B) {
	for _, mode := range []struct {
		name   string
		prefix string
		sub    subject
	}{
		{"", "none", subject{name: "http", tool: "echo", args: echoArgs}},
		{"mcp-", "server", subject{name: "http", tool: "mcp", args: mcpArgs("f")}},
	} {
		benchInProcessHTTP(b, mode.name, mode.prefix, mode.sub)
	}
}

func benchInProcessHTTP(b *testing.B, name, prefix string, sub subject) {
	for _, stateless := range []bool{false, true} {
		b.Run(fmt.Sprintf("%sstateless=%v", name, stateless), func(b *testing.B) {
			g := newGateway(b, map[string]def{"f": fixture()}, map[string]any{"toolPrefix": prefix})
			h, err := g.srv.Handler(HTTPOptions{Stateless: stateless})
			if err != nil {
				b.Fatal(err)
			}
			ts := httptest.NewServer(h)
			b.Cleanup(ts.Close)
			r := &running{url: ts.URL + "/mcp"}
			const clients = 50
			sessions := make([]*mcp.ClientSession, clients)
			for i := range sessions {
				sessions[i] = connect(b, r, nil)
				if !benchCall(b, sessions[i], subject{name: "warm-up", tool: sub.tool, args: sub.args}, i) {
					return
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			var next atomic.Int64
			var wg sync.WaitGroup
			for _, cs := range sessions {
				wg.Go(func() {
					for i := int(next.Add(1)); i <= b.N; i = int(next.Add(1)) {
						if !benchCall(b, cs, sub, i) {
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}
