package front

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

func TestMain(m *testing.M) {
	testserver.Main()
	hostile.Main()
	relayMain()
	pgtest.Main(m)
}

type def map[string]any

func fixture() def {
	path, args, env := testserver.Command(testserver.Good)
	return def{"command": path, "args": args, "env": env}
}

func everything(t *testing.T) def {
	c := mcptest.Peers(t).Everything()
	env := map[string]string{}
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return def{"command": c.Path, "args": c.Args, "env": env}
}

// testGateway is a front over an engine over servers.
type testGateway struct {
	srv  *Server
	home string
	seen *observer // what it shows of its calls, if watched (newWatched)
}

func newGateway(t testing.TB, servers map[string]def, settings map[string]any) *testGateway {
	t.Helper()
	return newGatewayWith(t, servers, settings, Options{})
}

// newGatewayWith is newGateway with front options (the engine's options
// and the metrics are the gateway's own).
func newGatewayWith(t testing.TB, servers map[string]def, settings map[string]any, opts Options) *testGateway {
	t.Helper()
	return newGatewayIn(t, t.TempDir(), servers, settings, opts)
}

// newGatewayIn is newGatewayWith over a home directory of the caller's,
// which gateways made one after the other share (their catalog, pins and
// audit trail).
func newGatewayIn(t testing.TB, home string, servers map[string]def, settings map[string]any, opts Options) *testGateway {
	t.Helper()
	d := config.Dirs{Home: home}
	doc := map[string]any{"mcpServers": servers}
	if settings != nil {
		doc["settings"] = settings
	}
	data, _ := json.Marshal(doc)
	os.MkdirAll(filepath.Dir(d.UserFile()), 0o755)
	if err := os.WriteFile(d.UserFile(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Load(d)
	if cfg.Err() != nil || len(cfg.Errors()) > 0 {
		t.Fatalf("config: %v %v", cfg.Err(), cfg.Errors())
	}
	opts.Engine.SpillDir = filepath.Join(home, "spill")
	opts.Metrics = NewMetrics()
	srv, err := New(t.Context(), cfg, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &testGateway{srv: srv, home: home}
}

// serveHTTP serves the gateway's Streamable HTTP handler on a loopback
// test server, closed when the test ends.
func (g *testGateway) serveHTTP(t testing.TB, opts HTTPOptions) *httptest.Server {
	t.Helper()
	h, err := g.srv.Handler(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// connect connects a go-sdk client to the gateway in memory.
func (g *testGateway) connect(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return g.connectAt(t, opts, "")
}

// connectAt connects a client that asks for a protocol revision ("" for the
// newest).
func (g *testGateway) connectAt(t *testing.T, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.srv.MCP().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts).Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range res.Tools {
		out = append(out, tool.Name)
	}
	slices.Sort(out)
	return out
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	return res
}

func TestProxyTool(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"f": fixture()}, nil)
	cs := g.connect(t, nil)
	if got := toolNames(t, cs); !slices.Equal(got, []string{"mcp"}) {
		t.Fatalf("tools = %v, want only mcp", got)
	}
	r := call(t, cs, "mcp", map[string]any{"tool": "echo", "server": "f", "args": map[string]any{"text": "hi"}})
	if r.IsError || text(r) != "hi" {
		t.Errorf("echo through mcp = %q (isError %v), want hi", text(r), r.IsError)
	}
	if sc, _ := json.Marshal(r.StructuredContent); !strings.Contains(string(sc), `"operation":"call"`) {
		t.Errorf("structured content = %s, want the details", sc)
	}
	// The SDK validates against the schema before the handler runs.
	r = call(t, cs, "mcp", map[string]any{"bogus": 1})
	if !r.IsError {
		t.Errorf("an unknown field was accepted: %s", text(r))
	}
}

func TestDirectTools(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	f := fixture()
	f["directTools"] = []string{"echo", "pid"}
	g := newGateway(t, map[string]def{"f-mcp": f}, map[string]any{"toolPrefix": "short"})
	cs := g.connect(t, nil)
	if got := toolNames(t, cs); !slices.Equal(got, []string{"f_echo", "f_pid", "mcp"}) {
		t.Fatalf("tools = %v, want f_echo, f_pid, mcp", got)
	}
	if r := call(t, cs, "f_echo", map[string]any{"text": "direct"}); text(r) != "direct" {
		t.Errorf("f_echo = %q, want direct", text(r))
	}
}

func TestTransparent(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"f": fixture()}, map[string]any{"toolPrefix": "none"})
	cs := g.connect(t, nil)
	got := toolNames(t, cs)
	if slices.Contains(got, "mcp") || !slices.Contains(got, "echo") || !slices.Contains(got, "record") {
		t.Fatalf("tools = %v, want the fixture's own tools and no mcp", got)
	}
	if r := call(t, cs, "echo", map[string]any{"text": "through"}); text(r) != "through" {
		t.Errorf("echo = %q, want through", text(r))
	}
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "test://static"})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "static text" {
		t.Errorf("read test://static = %+v, %v", res, err)
	}
	p, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil || len(p.Messages) != 1 || p.Messages[0].Content.(*mcp.TextContent).Text != "hello Ada" {
		t.Errorf("greet = %+v, %v", p, err)
	}
}

func TestPassThroughWithEverything(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"everything": everything(t)}, map[string]any{"toolPrefix": "none"})

	var mu sync.Mutex
	var progress []float64
	sampled := make(chan string, 1)
	// Server-to-client requests during a call exist up to 2025-11-25; the
	// 2026-07-28 revision replaces them with multi round-trip results.
	cs := g.connectAt(t, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			if req.Params.ProgressToken == "my-token" {
				progress = append(progress, req.Params.Progress)
			}
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			sampled <- req.Params.Messages[0].Content.(*mcp.TextContent).Text
			return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "sampled answer"}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada Lovelace"}}, nil
		},
	}, "2025-11-25")

	params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 0.3, "steps": 3}}
	params.SetProgressToken("my-token")
	if _, err := cs.CallTool(t.Context(), params); err != nil {
		t.Fatal(err)
	}
	// The server sends its last notification just before the result, and
	// go-sdk's client may hand the gateway the result first (it handles
	// notifications on a queue of their own): the gateway then drops that
	// one rather than send progress for a finished request. The first two
	// come well before.
	mu.Lock()
	if len(progress) < 2 || len(progress) > 3 || progress[0] != 1 || progress[1] != 2 {
		t.Errorf("progress notifications = %v, want 1, 2 (and 3) under the client's own token", progress)
	}
	mu.Unlock()

	r := call(t, cs, "trigger-sampling-request", map[string]any{"prompt": "say hi", "maxTokens": 10})
	select {
	case got := <-sampled:
		if !strings.Contains(got, "say hi") {
			t.Errorf("sampling request text = %q, want the prompt", got)
		}
	default:
		t.Errorf("the client got no sampling request; the tool said: %s", text(r))
	}
	if !strings.Contains(text(r), "sampled answer") {
		t.Errorf("sampling result = %q, want the client's answer", text(r))
	}

	r = call(t, cs, "trigger-elicitation-request", map[string]any{})
	if !strings.Contains(text(r), "Ada Lovelace") {
		t.Errorf("elicitation result = %q, want the client's answer", text(r))
	}

	// A client without the sampling capability gets a clear refusal.
	plain := g.connectAt(t, nil, "2025-11-25")
	r = call(t, plain, "trigger-sampling-request", map[string]any{"prompt": "x", "maxTokens": 5})
	if !r.IsError && !strings.Contains(text(r), "does not support sampling") {
		t.Errorf("sampling without the capability = %q (isError %v), want a refusal", text(r), r.IsError)
	}
}

func TestHTTPHardening(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"f": fixture()}, nil)
	ts := g.serveHTTP(t, HTTPOptions{Token: "s3cret", MaxBodyBytes: 1 << 10, Metrics: NewMetrics()})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(body string, mod func(*http.Request)) int {
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer s3cret")
		if mod != nil {
			mod(req)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	tests := []struct {
		name string
		body string
		mod  func(*http.Request)
		want int
	}{
		{"ok", init, nil, http.StatusOK},
		{"no token", init, func(r *http.Request) { r.Header.Del("Authorization") }, http.StatusUnauthorized},
		{"wrong token", init, func(r *http.Request) { r.Header.Set("Authorization", "Bearer nope") }, http.StatusUnauthorized},
		{"foreign origin", init, func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, http.StatusForbidden},
		{"rebinding host", init, func(r *http.Request) { r.Host = "evil.example" }, http.StatusForbidden},
		{"oversized body", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"` + strings.Repeat("a", 4096) + `"}}`, nil, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := post(tt.body, tt.mod); got != tt.want {
				t.Errorf("status %d, want %d", got, tt.want)
			}
		})
	}
	resp, err := http.Get(ts.URL + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	if err := CheckListen("0.0.0.0:8080", ""); err == nil {
		t.Error("CheckListen allowed 0.0.0.0 without a token")
	}
	if err := CheckListen("127.0.0.1:8080", ""); err != nil {
		t.Errorf("CheckListen refused loopback: %v", err)
	}
	if err := CheckListen(":8080", "0123456789abcdef"); err != nil {
		t.Errorf("CheckListen refused all interfaces with a token: %v", err)
	}
}

// TestCheckListenToken checks the bearer token a non-loopback address
// needs: present, and at least MinTokenBytes, with an error that gives the
// length and how to make a good one.
func TestCheckListenToken(t *testing.T) {
	tests := []struct {
		addr, token string
		want        error
		message     string
	}{
		{"0.0.0.0:8080", "", ErrNeedToken, ""},
		{"0.0.0.0:8080", "hunter2", ErrShortToken, "the token is 7 bytes, and \"0.0.0.0:8080\", reachable from other machines, needs at least 16 (hint: make one with openssl rand -hex 32"},
		{":8080", "0123456789abcde", ErrShortToken, "the token is 15 bytes"},
		{"[::]:8080", "ééééééé", ErrShortToken, "the token is 14 bytes"},
		{"192.0.2.1:8080", "0123456789abcdef", nil, ""},
		{"127.0.0.1:8080", "", nil, ""},
		{"localhost:8080", "short", nil, ""},
		{"[::1]:8080", "short", nil, ""},
	}
	for _, tt := range tests {
		err := CheckListen(tt.addr, tt.token)
		if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) || !strings.Contains(fmt.Sprint(err), tt.message) {
			t.Errorf("CheckListen(%q, %q): got %v, want %v with %q", tt.addr, tt.token, err, tt.want, tt.message)
		}
		if tt.token != "" && strings.Contains(fmt.Sprint(err), tt.token) {
			t.Errorf("CheckListen(%q, %q): the error shows the token: %v", tt.addr, tt.token, err)
		}
	}
}

// TestHTTPSessionsShareUpstreams connects three HTTP clients and checks
// that one child serves them all, and that each keeps its own references.
func TestHTTPSessionsShareUpstreams(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"f": fixture()}, nil)
	ts := g.serveHTTP(t, HTTPOptions{})
	var sessions []*mcp.ClientSession
	for range 3 {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		sessions = append(sessions, cs)
	}
	pids := map[string]bool{}
	for _, cs := range sessions {
		r := call(t, cs, "mcp", map[string]any{"tool": "pid", "server": "f"})
		pids[text(r)] = true
	}
	if len(pids) != 1 {
		t.Errorf("three sessions reached %d server processes %v, want one shared", len(pids), pids)
	}
	// References are per session: one that listed resources can read r1,
	// one that did not cannot.
	call(t, sessions[0], "mcp", map[string]any{"operation": "resources.list", "server": "f"})
	if r := call(t, sessions[0], "mcp", map[string]any{"operation": "resources.read", "server": "f", "resource": "r1"}); r.IsError {
		t.Errorf("session 0 cannot read its own r1: %s", text(r))
	}
	if r := call(t, sessions[1], "mcp", map[string]any{"operation": "resources.read", "server": "f", "resource": "r1"}); !r.IsError {
		t.Errorf("session 1 read session 0's reference: %s", text(r))
	}
}

// TestClientDisconnectMidCall drops a client while its call hangs and
// checks that the gateway keeps serving, and that the call ends by its
// request timeout at the latest, leaving nothing behind.
func TestClientDisconnectMidCall(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	f := fixture()
	f["requestTimeoutMs"] = 2000
	g := newGateway(t, map[string]def{"f": f}, nil)
	h, _ := g.srv.Handler(HTTPOptions{})
	ts := httptest.NewServer(h)
	defer ts.Close()
	for _, version := range []string{"2025-11-25", ""} {
		ctx, cancel := context.WithCancel(t.Context())
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "calls")
		done := make(chan struct{})
		go func() {
			defer close(done)
			cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"tool": "record", "server": "f", "args": map[string]any{"file": file, "then": "hang"}}})
		}()
		for deadline := time.Now().Add(20 * time.Second); ; {
			if data, _ := os.ReadFile(file); len(data) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the call never reached the server")
			}
			time.Sleep(10 * time.Millisecond) // polling a file the child writes: there is no event to wait on
		}
		cancel()
		cs.Close()
		<-done
		other, err := mcp.NewClient(&mcp.Implementation{Name: "c2", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r := call(t, other, "mcp", map[string]any{"tool": "echo", "server": "f", "args": map[string]any{"text": "still here"}}); text(r) != "still here" {
			t.Errorf("after a client dropped mid-call: %q", text(r))
		}
		other.Close()
	}
}

// TestStatelessAndMetrics serves without sessions, as replicas behind a load
// balancer would, and checks that calls work and that /metrics counts them.
func TestStatelessAndMetrics(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"f": fixture()}, nil)
	metrics := NewMetrics()
	g.srv.opts.Metrics = metrics
	ts := g.serveHTTP(t, HTTPOptions{Stateless: true, Metrics: metrics})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for range 3 {
		if r := call(t, cs, "mcp", map[string]any{"tool": "echo", "server": "f", "args": map[string]any{"text": "stateless"}}); text(r) != "stateless" {
			t.Fatalf("stateless call = %q", text(r))
		}
	}
	if r := call(t, cs, "mcp", map[string]any{"tool": "nope", "server": "f"}); !r.IsError {
		t.Fatalf("unknown tool succeeded: %s", text(r))
	}
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`switchboard_calls_total{kind="mcp",server="f"} 4`,
		`switchboard_call_errors_total{kind="mcp",server="f"} 1`,
		`switchboard_call_duration_seconds_count{kind="mcp",server="f"} 4`,
		`switchboard_server_state{server="f",state="connected"} 1`,
		"switchboard_audit_write_failures_total 0\n",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
}

// TestMultiRoundTrip checks sampling and elicitation for a client on the
// 2026-07-28 revision, where the server may not send it requests during a
// call: the gateway suspends the upstream call, answers with input
// requests, and resumes when the client calls again with the answers (the
// go-sdk client does that by itself). Both the mcp tool and a mirrored tool
// are tried.
func TestMultiRoundTrip(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	for _, prefix := range []string{"none", "server"} {
		t.Run(prefix, func(t *testing.T) {
			g := newGateway(t, map[string]def{"everything": everything(t)}, map[string]any{"toolPrefix": prefix})
			var sampled, elicited int
			cs := g.connect(t, &mcp.ClientOptions{
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					sampled++
					return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "sampled via round trip"}}, nil
				},
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					elicited++
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace Hopper"}}, nil
				},
			})
			if v := cs.InitializeResult().ProtocolVersion; v < "2026-07-28" {
				t.Fatalf("negotiated %s, want 2026-07-28 or later", v)
			}
			sampling := func(args map[string]any) *mcp.CallToolResult {
				if prefix == "none" {
					return call(t, cs, "trigger-sampling-request", args)
				}
				return call(t, cs, "mcp", map[string]any{"tool": "trigger-sampling-request", "server": "everything", "args": args})
			}
			r := sampling(map[string]any{"prompt": "say hi", "maxTokens": 10})
			if r.IsError || !strings.Contains(text(r), "sampled via round trip") || sampled != 1 {
				t.Errorf("sampling: %q (isError %v), client asked %d times; want the client's answer once", text(r), r.IsError, sampled)
			}
			var er *mcp.CallToolResult
			if prefix == "none" {
				er = call(t, cs, "trigger-elicitation-request", map[string]any{})
			} else {
				er = call(t, cs, "mcp", map[string]any{"tool": "trigger-elicitation-request", "server": "everything"})
			}
			if er.IsError || !strings.Contains(text(er), "Grace Hopper") || elicited != 1 {
				t.Errorf("elicitation: %q (isError %v), client asked %d times; want the client's answer once", text(er), er.IsError, elicited)
			}
		})
	}
}

// Options.Changed runs after the server has handled a change of one of the
// engine's servers: a lazy server's first call starts it and stores its
// lists, which serve follows with a release of its binary's pages.
func TestChangedAfterServerStarts(t *testing.T) {
	changed := make(chan struct{}, 16)
	g := newGatewayWith(t, map[string]def{"fx": fixture()}, map[string]any{"toolPrefix": "server"},
		Options{Changed: func() { changed <- struct{}{} }})
	cs := g.connect(t, nil)
	select {
	case <-changed:
		t.Fatal("Changed before any server started")
	default:
	}
	res := call(t, cs, "mcp", map[string]any{"tool": "echo", "server": "fx", "args": map[string]any{"text": "hi"}})
	if res.IsError {
		t.Fatalf("call: %v", res.Content)
	}
	<-changed
}
