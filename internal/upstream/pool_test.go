package upstream_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestLazy is the acceptance test: with ten servers configured, making the
// pool starts nothing, and concurrent first uses of one start exactly that one.
func TestLazy(t *testing.T) {
	var servers []*config.Server
	for i := range 10 {
		servers = append(servers, fixture(fmt.Sprintf("s%d", i), testserver.Good))
	}
	h := newPool(t, servers, nil)
	if got := children(t); len(got) != 0 {
		t.Fatalf("after New: children %v, want none", got)
	}
	for _, st := range h.Snapshot() {
		if st.State != upstream.StateDisconnected || st.Generation != 0 || st.Tools != -1 {
			t.Errorf("after New: %+v, want disconnected, generation 0, tools unknown", st)
		}
	}
	parallel(8, func(i int) {
		if got, err := h.call(t.Context(), "s3", "echo", map[string]any{"text": "hi"}); err != nil || got != "hi" {
			t.Errorf("echo = %q, %v; want hi", got, err)
		}
	})
	if got := children(t); len(got) != 1 {
		t.Errorf("after first use: children %v, want one", got)
	}
	for _, st := range h.Snapshot() {
		want := upstream.StateDisconnected
		if st.Name == "s3" {
			want = upstream.StateConnected
			if st.Generation != 1 || st.PID == 0 {
				t.Errorf("s3: %+v, want generation 1 and a pid", st)
			}
		}
		if st.State != want {
			t.Errorf("%s: state %s, want %s", st.Name, st.State, want)
		}
	}
}

func TestOperations(t *testing.T) {
	s := fixture("f", testserver.Good)
	s.ExcludeTools = []string{"hang", "cr*"}
	h := newPool(t, []*config.Server{s}, nil)
	ctx := t.Context()

	tools, err := h.Tools(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "echo") || slices.Contains(names, "hang") || slices.Contains(names, "crash") {
		t.Errorf("tools = %v, want echo and neither hang nor crash", names)
	}
	if st := h.status("f"); st.Tools != len(tools) {
		t.Errorf("status tools = %d, want %d", st.Tools, len(tools))
	}
	if _, err := h.CallTool(ctx, "f", "hang", nil); err == nil || !strings.Contains(err.Error(), "excluded") {
		t.Errorf("calling an excluded tool: err = %v, want excluded", err)
	}
	// nil arguments are sent as {}: the SDK server would reject null.
	if got, err := h.call(ctx, "f", "pid", nil); err != nil || got == "" {
		t.Errorf("pid with nil args = %q, %v", got, err)
	}
	if got, err := h.Instructions(ctx, "f"); err != nil || got != testserver.Instructions {
		t.Errorf("Instructions = %q, %v", got, err)
	}
	prompts, err := h.Prompts(ctx, "f")
	if err != nil || len(prompts) != 1 {
		t.Fatalf("Prompts = %v, %v; want greet", prompts, err)
	}
	pr, err := h.GetPrompt(ctx, "f", "greet", map[string]string{"name": "bob"})
	if err != nil || pr.Messages[0].Content.(*mcp.TextContent).Text != "hello bob" {
		t.Errorf("GetPrompt = %+v, %v", pr, err)
	}
	res, err := h.Resources(ctx, "f")
	if err != nil || len(res) != 1 {
		t.Fatalf("Resources = %v, %v", res, err)
	}
	rr, err := h.ReadResource(ctx, "f", res[0].URI)
	if err != nil || rr.Contents[0].Text != "static text" {
		t.Errorf("ReadResource = %+v, %v", rr, err)
	}
	if _, err := h.ResourceTemplates(ctx, "f"); err != nil {
		t.Errorf("ResourceTemplates: %v", err)
	}
}

func TestUnknownAndDisabled(t *testing.T) {
	d := fixture("off", testserver.Good)
	d.Disabled = true
	h := newPool(t, []*config.Server{d, fixture("on", testserver.Good)}, nil)
	_, err := h.Tools(t.Context(), "nope")
	if !errors.Is(err, upstream.ErrUnknownServer) || !strings.Contains(err.Error(), "off, on") {
		t.Errorf("unknown server: err = %v, want ErrUnknownServer listing off, on", err)
	}
	_, err = h.Tools(t.Context(), "off")
	if !errors.Is(err, upstream.ErrDisabled) {
		t.Errorf("disabled server: err = %v, want ErrDisabled", err)
	}
	if st := h.status("off"); st.State != upstream.StateDisabled {
		t.Errorf("disabled server: state %s", st.State)
	}
	if got := children(t); len(got) != 0 {
		t.Errorf("children %v, want none", got)
	}
}

func TestTimeoutKeepsConnection(t *testing.T) {
	// The limit is what is tested, and "hang" never answers, so it elapses
	// whatever the machine's speed; it is long enough that connecting and
	// echoing on a busy machine never reach it.
	s := fixture("f", testserver.Good)
	s.RequestTimeout = 3 * time.Second
	h := newPool(t, []*config.Server{s}, nil)
	if _, err := h.call(t.Context(), "f", "echo", nil); err != nil {
		t.Fatal(err)
	}
	_, err := h.call(t.Context(), "f", "hang", nil)
	const want = `calling "hang" on "f": timed out after 3s`
	if err == nil || err.Error() != want || !errors.Is(err, upstream.ErrTimeout) {
		t.Fatalf("err = %v, want %s", err, want)
	}
	if got, err := h.call(t.Context(), "f", "echo", map[string]any{"text": "still"}); err != nil || got != "still" {
		t.Errorf("echo after timeout = %q, %v", got, err)
	}
	if st := h.status("f"); st.Generation != 1 || st.State != upstream.StateConnected {
		t.Errorf("after timeout: %+v, want the first connection, connected", st)
	}
}

func TestCancel(t *testing.T) {
	h := newPool(t, []*config.Server{fixture("f", testserver.Good)}, nil)
	if _, err := h.call(t.Context(), "f", "echo", nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := h.call(ctx, "f", "hang", nil)
		errc <- err
	}()
	cancel()
	err := <-errc
	var e *upstream.Error
	if !errors.As(err, &e) || e.Class != upstream.ClassCanceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a cancellation", err)
	}
	if _, err := h.call(t.Context(), "f", "echo", nil); err != nil {
		t.Errorf("echo after cancel: %v", err)
	}
	if st := h.status("f"); st.Generation != 1 {
		t.Errorf("generation %d after cancel, want 1", st.Generation)
	}
}

func TestCrashMidCall(t *testing.T) {
	h := newPool(t, []*config.Server{fixture("f", testserver.Good)}, nil)
	_, err := h.call(t.Context(), "f", "crash", nil)
	if err == nil || !strings.Contains(err.Error(), "exited with status 2: panic: fixture crashed on purpose") {
		t.Fatalf("err = %v, want exit status and stderr", err)
	}
	st := h.waitFor("f", "failed", inState(upstream.StateFailed))
	if st.ErrorClass != upstream.ClassExited {
		t.Errorf("status %+v, want class exited", st)
	}
	// The next operation connects again; the crashed call is not replayed.
	if got, err := h.call(t.Context(), "f", "echo", map[string]any{"text": "back"}); err != nil || got != "back" {
		t.Fatalf("echo after crash = %q, %v", got, err)
	}
	if st := h.status("f"); st.Generation != 2 {
		t.Errorf("generation %d, want 2", st.Generation)
	}
}

func TestStartFailures(t *testing.T) {
	missing := fixture("missing", testserver.Good)
	missing.Command = "switchboard-no-such-command"
	noInit := fixture("noinit", testserver.NoInit)
	noInit.RequestTimeout = 500 * time.Millisecond
	noInit.ProtocolVersion = "legacy"
	h := newPool(t, []*config.Server{fixture("exits", testserver.ExitAtStart), missing, noInit, fixture("good", testserver.Good)}, nil)
	tests := []struct {
		server, want string
		class        upstream.Class
	}{
		{"exits", `connecting "exits": starting "` + fixture("", "").Command + `": exited with status 1: Error: Cannot find module '/nowhere/index.js'`, upstream.ClassStart},
		{"missing", `connecting "missing": starting "switchboard-no-such-command": executable file not found in $PATH`, upstream.ClassStart},
		{"noinit", `connecting "noinit": timed out after 500ms`, upstream.ClassTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			_, err := h.Tools(t.Context(), tt.server)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v\nwant %s", err, tt.want)
			}
			if st := h.status(tt.server); st.State != upstream.StateFailed || st.ErrorClass != tt.class {
				t.Errorf("status %+v, want failed, class %s", st, tt.class)
			}
		})
	}
	if _, err := h.Tools(t.Context(), "good"); err != nil {
		t.Errorf("the good server: %v", err)
	}
}

func TestProtocolNegotiation(t *testing.T) {
	with := func(name, mode, version string) *config.Server {
		s := fixture(name, mode)
		s.ProtocolVersion = version
		return s
	}
	servers := []*config.Server{
		// "latest" probes with server/discover and falls back.
		with("exit-latest", testserver.ExitOnProbe, "latest"), with("ignore-latest", testserver.IgnoreProbe, "latest"),
		with("good-latest", testserver.Good, "latest"),
		// "auto", the default, is 2025-11-25 over stdio: no probe, unless
		// the server refuses that handshake.
		fixture("exit-auto", testserver.ExitOnProbe), fixture("good", testserver.Good),
		fixture("only-modern", testserver.OnlyModern),
		with("exit-legacy", testserver.ExitOnProbe, "legacy"), with("exact", testserver.Good, "2025-06-18"),
	}
	// A server that dies on the probe says so on stderr, once per probe.
	var mu sync.Mutex
	died := map[string]int{}
	// The probe's grace period starts when the server first answers (see
	// TestSlowModernServer). go-sdk servers answer server/discover and the
	// ping concurrently: the grace is what ignore-latest waits, and long
	// enough that good-latest never needs it.
	h := newPool(t, servers, &upstream.Options{ProbeTimeout: 2 * time.Second, Stderr: func(server, line string) {
		if strings.Contains(line, "unknown method server/discover") {
			mu.Lock()
			died[server]++
			mu.Unlock()
		}
	}})
	want := map[string]string{
		"exit-latest": "2025-11-25", "ignore-latest": "2025-11-25", "good-latest": "2026-07-28",
		"exit-auto": "2025-11-25", "good": "2025-11-25", "only-modern": "2026-07-28",
		"exit-legacy": "2025-11-25", "exact": "2025-06-18",
	}
	for _, s := range servers {
		t.Run(s.Name, func(t *testing.T) {
			if _, err := h.call(t.Context(), s.Name, "echo", nil); err != nil {
				t.Fatal(err)
			}
			if st := h.status(s.Name); st.Protocol != want[s.Name] {
				t.Errorf("protocol %q, want %q", st.Protocol, want[s.Name])
			}
		})
	}
	// The fallback is remembered: reconnecting does not probe again.
	if err := h.Reconnect(t.Context(), "exit-latest"); err != nil {
		t.Fatal(err)
	}
	if st := h.status("exit-latest"); st.Generation != 2 || st.State != upstream.StateConnected {
		t.Errorf("after reconnect: %+v", st)
	}
	// So is a refused handshake: the server is probed at once.
	if err := h.Reconnect(t.Context(), "only-modern"); err != nil {
		t.Fatal(err)
	}
	if st := h.status("only-modern"); st.Generation != 2 || st.Protocol != "2026-07-28" {
		t.Errorf("only-modern after reconnect: %+v", st)
	}
	// Pinned to 2025-11-25, a server that refuses it is not probed, and
	// the error is its refusal.
	pinned := newPool(t, []*config.Server{with("only-modern-legacy", testserver.OnlyModern, "legacy")}, nil)
	if _, err := pinned.call(t.Context(), "only-modern-legacy", "echo", nil); err == nil || !strings.Contains(err.Error(), "unsupported protocol version") {
		t.Errorf("a refused pinned handshake: %v", err)
	} else {
		t.Logf("a refused pinned handshake: %v", err)
	}
	// The stderr lines are read as the servers run: they have been by the
	// time the pool has closed.
	h.Close()
	mu.Lock()
	defer mu.Unlock()
	if died["exit-latest"] != 1 || died["exit-auto"] != 0 || died["exit-legacy"] != 0 {
		t.Errorf("servers that died on the probe: %v; want exit-latest once, no other", died)
	}
}

// TestSlowModernServer: a server that speaks 2026-07-28 but starts after the
// probe timeout connects with 2026-07-28, on its first start.
func TestSlowModernServer(t *testing.T) {
	for _, tc := range []struct {
		name, mode, delay string
		opts              upstream.Options
	}{
		// The case seen: a server that starts in 4 s, the default probe
		// timeout 3 s, and that ends on initialize after server/discover.
		{"default probe", testserver.SlowModern, "4s", upstream.Options{}},
		// A server that starts long after a short probe timeout (it answers
		// in order, so the grace period is never needed).
		{"short probe", testserver.SlowModern, "1500ms", upstream.Options{ProbeTimeout: 50 * time.Millisecond}},
		// A go-sdk server, which answers concurrently.
		{"go-sdk", testserver.SlowGood, "4s", upstream.Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fixture("slow", tc.mode)
			s.ProtocolVersion = "latest"
			s.Env[testserver.DelayEnv] = tc.delay
			h := newPool(t, []*config.Server{s}, &tc.opts)
			if _, err := h.call(t.Context(), "slow", "echo", nil); err != nil {
				t.Fatal(err)
			}
			if st := h.status("slow"); st.Protocol != "2026-07-28" || st.Generation != 1 {
				t.Errorf("status %+v, want protocol 2026-07-28 on the first connection", st)
			}
		})
	}
}

func TestBadOutput(t *testing.T) {
	h := newPool(t, []*config.Server{fixture("garbage", testserver.Garbage), fixture("huge", testserver.HugeLine), fixture("unknown", testserver.UnknownContent)}, nil)
	ctx := t.Context()
	t.Run("garbage", func(t *testing.T) {
		if got, err := h.call(ctx, "garbage", "echo", nil); err != nil || got != "called echo" {
			t.Errorf("call = %q, %v", got, err)
		}
	})
	t.Run("huge", func(t *testing.T) {
		for _, tool := range []string{"big-first", "big-last"} {
			_, err := h.call(ctx, "huge", tool, nil)
			if err == nil || !strings.Contains(err.Error(), "response larger than 16 MiB discarded") {
				t.Errorf("%s: err = %v, want a bound error", tool, err)
			}
		}
		if got, err := h.call(ctx, "huge", "echo", nil); err != nil || got != "small" {
			t.Errorf("after huge lines: call = %q, %v", got, err)
		}
		if st := h.status("huge"); st.Generation != 1 {
			t.Errorf("generation %d, want 1: the connection survives", st.Generation)
		}
	})
	t.Run("unknown content", func(t *testing.T) {
		res, err := h.CallTool(ctx, "unknown", "x", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Content) != 3 {
			t.Fatalf("content = %v, want 3 blocks", res.Content)
		}
		mid := res.Content[1].(*mcp.TextContent)
		if !strings.Contains(mid.Text, `unsupported type "hologram"`) || mid.Meta["io.switchboard/unsupported-content"] == nil {
			t.Errorf("middle block = %+v", mid)
		}
	})
}

func TestDiscoveryBounds(t *testing.T) {
	h := newPool(t, []*config.Server{
		fixture("repeat", testserver.RepeatCursor), fixture("pages", testserver.ManyPages),
		fixture("many", testserver.ManyTools), fixture("unsafe", testserver.UnsafeNames),
	}, nil)
	for name, want := range map[string]string{
		"repeat": `listing tools on "repeat": discovery bound exceeded: the server repeated the pagination cursor "same"`,
		"pages":  `listing tools on "pages": discovery bound exceeded: more than 100 pages of tools`,
		"many":   `listing tools on "many": discovery bound exceeded: more than 10000 tools`,
	} {
		_, err := h.Tools(t.Context(), name)
		if err == nil || err.Error() != want || !errors.Is(err, upstream.ErrBound) {
			t.Errorf("%s: err = %v\nwant %s", name, err, want)
		}
	}
	tools, err := h.Tools(t.Context(), "unsafe")
	if err != nil || len(tools) != 1 || tools[0].Name != "good" {
		t.Errorf("unsafe names: tools = %v, %v; want only good", tools, err)
	}
}

func TestListChanged(t *testing.T) {
	for _, version := range []string{"auto", "latest", "legacy"} {
		t.Run(version, func(t *testing.T) {
			s := fixture("f", testserver.Good)
			s.ProtocolVersion = version
			h := newPool(t, []*config.Server{s}, nil)
			tools, err := h.Tools(t.Context(), "f")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.call(t.Context(), "f", "add-tool", map[string]any{"text": "extra"}); err != nil {
				t.Fatal(err)
			}
			h.waitFor("f", "the new tool", func(st upstream.Status) bool { return st.Tools == len(tools)+1 })
			tools, err = h.Tools(t.Context(), "f")
			if err != nil || !slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return t.Name == "extra" }) {
				t.Errorf("tools after list_changed = %v, %v", len(tools), err)
			}
		})
	}
}

func TestIdleClose(t *testing.T) {
	s := fixture("f", testserver.Good)
	s.IdleTimeout = 100 * time.Millisecond
	h := newPool(t, []*config.Server{s}, nil)
	if _, err := h.call(t.Context(), "f", "echo", nil); err != nil {
		t.Fatal(err)
	}
	h.waitFor("f", "idle close", inState(upstream.StateDisconnected))
	if _, err := h.call(t.Context(), "f", "echo", nil); err != nil {
		t.Fatal(err)
	}
	if st := h.status("f"); st.Generation != 2 {
		t.Errorf("generation %d, want 2", st.Generation)
	}
}

func TestReconnect(t *testing.T) {
	h := newPool(t, []*config.Server{fixture("f", testserver.Good)}, nil)
	pid1, err := h.call(t.Context(), "f", "pid", nil)
	if err != nil {
		t.Fatal(err)
	}
	parallel(4, func(int) {
		if err := h.Reconnect(t.Context(), "f"); err != nil {
			t.Error(err)
		}
	})
	pid2, err := h.call(t.Context(), "f", "pid", nil)
	if err != nil {
		t.Fatal(err)
	}
	st := h.status("f")
	if pid1 == pid2 || st.Generation < 2 || st.Generation > 5 {
		t.Errorf("pids %s, %s, generation %d: want a new process", pid1, pid2, st.Generation)
	}
	if got := children(t); len(got) != 1 {
		t.Errorf("children %v, want one", got)
	}
}

func TestAutomaticReconnect(t *testing.T) {
	s := fixture("f", testserver.Good)
	s.Reconnect = config.Reconnect{Automatic: true, MaxAttempts: 3, BaseDelay: 10 * time.Millisecond}
	h := newPool(t, []*config.Server{s}, nil)
	if _, err := h.call(t.Context(), "f", "crash", nil); err == nil {
		t.Fatal("crash: no error")
	}
	h.waitFor("f", "automatic reconnect", func(st upstream.Status) bool {
		return st.State == upstream.StateConnected && st.Generation == 2
	})
}

func TestKeepAlive(t *testing.T) {
	s := fixture("f", testserver.Good)
	s.Lifecycle = config.LifecycleKeepAlive
	h := newPool(t, []*config.Server{s}, &upstream.Options{PingInterval: 50 * time.Millisecond})
	h.waitFor("f", "eager connect", inState(upstream.StateConnected))
}

// TestPreconnect starts a lazy server before anything asks for it: it
// connects once, whatever asks after.
func TestPreconnect(t *testing.T) {
	h := newPool(t, []*config.Server{fixture("f", testserver.Good), fixture("g", testserver.Good)}, nil)
	h.Preconnect(t.Context(), "f")
	h.Preconnect(t.Context(), "nobody") // ignored
	st := h.waitFor("f", "the connection Preconnect started", inState(upstream.StateConnected))
	if g := h.status("g"); g.State != upstream.StateDisconnected {
		t.Errorf("g, not named, is %s", g.State)
	}
	h.Preconnect(t.Context(), "f") // connected already: nothing happens
	if out, err := h.call(t.Context(), "f", "echo", map[string]any{"text": "hi"}); err != nil || out != "hi" {
		t.Fatalf("echo = %q, %v", out, err)
	}
	if now := h.status("f"); now.Generation != st.Generation || now.PID != st.PID {
		t.Errorf("after a second Preconnect and a call, f is at generation %d, pid %d; want %d, %d: one connection", now.Generation, now.PID, st.Generation, st.PID)
	}

}

// TestPreconnectReturnsOnceStarted: Preconnect waits for a stdio server's
// process to start, and no longer. A server that never answers its
// handshake is still connecting when Preconnect returns, and its process
// is already recorded (on Linux, in the pool's group file); a command that
// cannot start ends the attempt with its error, and Preconnect returns too.
func TestPreconnectReturnsOnceStarted(t *testing.T) {
	groups := t.TempDir()
	missing := &config.Server{Name: "missing", Type: config.TransportStdio, Command: filepath.Join(t.TempDir(), "no-such-server"),
		RequestTimeout: 20 * time.Second, Lifecycle: config.LifecycleLazy}
	h := newPool(t, []*config.Server{fixture("quiet", testserver.NoInit), missing}, &upstream.Options{GroupDir: groups})
	preconnect := func(name string) {
		returned := make(chan struct{})
		go func() { h.Preconnect(t.Context(), name); close(returned) }()
		select {
		case <-returned:
		case <-time.After(time.Minute): // a hang: quiet never answers
			t.Fatalf("Preconnect(%q) did not return", name)
		}
	}

	preconnect("quiet")
	if st := h.status("quiet"); st.State != upstream.StateConnecting {
		t.Errorf("quiet, which never answers initialize, is %s after Preconnect; want %s", st.State, upstream.StateConnecting)
	}
	if runtime.GOOS == "linux" {
		files, _ := filepath.Glob(filepath.Join(groups, "*.groups"))
		var fields []string
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			fields = append(fields, strings.Fields(string(b))...)
		}
		if len(fields) != 2 { // "PGID START"
			t.Errorf("the group file holds %q once Preconnect has returned; want quiet's group, recorded as it started", fields)
		}
	}

	preconnect("missing")
	st := h.waitFor("missing", "the failed start", inState(upstream.StateFailed))
	if !strings.Contains(st.Error, "no-such-server") {
		t.Errorf("missing failed with %q; want its command named", st.Error)
	}
}

// TestPreconnectContext: Preconnect returns once its context is done, even
// while the dial is still resolving the server's variables (a ${cmd:…}
// reference that takes its time), and the dial ends with the pool.
func TestPreconnectContext(t *testing.T) {
	slow := fixture("slow", testserver.Good)
	slow.Env["TOKEN"] = "${cmd:sleep 60}"
	h := newPool(t, []*config.Server{slow}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	returned := make(chan struct{})
	go func() { h.Preconnect(ctx, "slow"); close(returned) }()
	select {
	case <-returned:
	case <-time.After(time.Minute): // a hang: the command sleeps for a minute
		t.Fatal("Preconnect did not return once its context was done")
	}
	if st := h.status("slow"); st.State != upstream.StateConnecting {
		t.Errorf("slow is %s after Preconnect; want %s, its command still running", st.State, upstream.StateConnecting)
	}
}

func TestProcessGroupKilled(t *testing.T) {
	h := newPool(t, []*config.Server{fixture("f", testserver.Good)}, nil)
	out, err := h.call(t.Context(), "f", "spawn", nil)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, _ := strconv.Atoi(out)
	if !mcptest.Alive(grandchild) {
		t.Fatalf("grandchild %d not running", grandchild)
	}
	start := time.Now()
	h.Close()
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Close took %s", d)
	}
	if mcptest.Alive(grandchild) {
		t.Errorf("grandchild %d survived Close", grandchild)
	}
}

func TestClose(t *testing.T) {
	h := newPool(t, []*config.Server{fixture("a", testserver.Good), fixture("b", testserver.Good)}, nil)
	parallel(2, func(i int) {
		if _, err := h.call(t.Context(), []string{"a", "b"}[i], "echo", nil); err != nil {
			t.Error(err)
		}
	})
	parallel(3, func(int) { h.Close() })
	if got := children(t); len(got) != 0 {
		t.Errorf("children after Close: %v", got)
	}
	if _, err := h.call(t.Context(), "a", "echo", nil); !errors.Is(err, upstream.ErrClosed) {
		t.Errorf("after Close: err = %v, want ErrClosed", err)
	}
}

// TestOnlyConnected: under OnlyConnected an operation uses the server's
// connection and never starts one: not before the server was ever
// connected, nor after its process died, whatever was known of its state
// a moment before (the catalog's refresh looks, then lists).
func TestOnlyConnected(t *testing.T) {
	h := newPool(t, []*config.Server{fixture("f", testserver.Good)}, nil)
	only := upstream.OnlyConnected(t.Context())
	notConnected := func(when string) {
		t.Helper()
		if _, err := h.Tools(only, "f"); !errors.Is(err, upstream.ErrNotConnected) {
			t.Fatalf("listing %s: %v; want ErrNotConnected", when, err)
		}
		if st := h.status("f"); st.State == upstream.StateConnecting || st.State == upstream.StateConnected {
			t.Fatalf("listing %s started the server: %+v", when, st)
		}
	}
	notConnected("before the server ever connected")

	if _, err := h.Tools(t.Context(), "f"); err != nil {
		t.Fatal(err)
	}
	if tools, err := h.Tools(only, "f"); err != nil || len(tools) == 0 {
		t.Fatalf("listing a connected server: %d tools, %v", len(tools), err)
	}
	if _, err := h.call(t.Context(), "f", "crash", nil); err == nil {
		t.Fatal("crash answered")
	}
	h.waitFor("f", "failed", inState(upstream.StateFailed))
	notConnected("after the server died")
	if st := h.status("f"); st.Generation != 1 {
		t.Errorf("generation %d after listing only connected, want 1", st.Generation)
	}
}
