package upstream_test

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

func TestMain(m *testing.M) {
	upstream.SupervisorMain() // first: a supervisor's environment names a test server too
	testserver.Main()
	hostile.Main()
	ownerMain()
	os.Exit(m.Run())
}

// fixture returns a stdio server running the test server in mode.
func fixture(name, mode string) *config.Server {
	path, args, env := testserver.Command(mode)
	return &config.Server{
		Name: name, Type: config.TransportStdio, Command: path, Args: args, Env: env,
		RequestTimeout: 20 * time.Second, ProtocolVersion: "auto", Lifecycle: config.LifecycleLazy,
	}
}

// A harness is a pool under test, with a channel of its change notifications.
type harness struct {
	*upstream.Pool
	t       testing.TB
	changes chan string
}

// newPool checks for leaked processes, makes a pool and closes it when the
// test ends. Its stdio servers run under supervisors, as the switchboard
// command runs them, and it records their groups in a directory of the
// test's own.
func newPool(t testing.TB, servers []*config.Server, opts *upstream.Options) *harness {
	t.Helper()
	mcptest.CheckNoLeaks(t)
	h := &harness{t: t, changes: make(chan string, 1024)}
	o := upstream.Options{}
	if opts != nil {
		o = *opts
	}
	o.BaseEnv = append(upstream.BaseEnv(os.Environ()), mcptest.OwnerEnv+"="+os.Getenv(mcptest.OwnerEnv))
	if o.GroupDir == "" {
		o.GroupDir = t.TempDir()
	}
	o.Supervise = true // as the switchboard command does
	o.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	o.OnChange = func(name string) {
		select {
		case h.changes <- name:
		default:
		}
	}
	h.Pool = upstream.New(servers, &o)
	t.Cleanup(func() { h.Close() })
	return h
}

// testWriter sends log output to t.Log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// status returns the named server's status.
func (h *harness) status(name string) upstream.Status {
	for _, st := range h.Snapshot() {
		if st.Name == name {
			return st
		}
	}
	h.t.Fatalf("no server %q in snapshot", name)
	return upstream.Status{}
}

// waitFor waits, on change notifications, until cond holds for the named
// server's status; it fails the test after 20 s.
func (h *harness) waitFor(name string, what string, cond func(upstream.Status) bool) upstream.Status {
	h.t.Helper()
	timeout := time.NewTimer(20 * time.Second)
	defer timeout.Stop()
	for {
		if st := h.status(name); cond(st) {
			return st
		}
		select {
		case <-h.changes:
		case <-timeout.C:
			h.t.Fatalf("waiting for %s of %q: status %+v", what, name, h.status(name))
		}
	}
}

func inState(s upstream.State) func(upstream.Status) bool {
	return func(st upstream.Status) bool { return st.State == s }
}

// call calls a tool and returns its first text.
func (h *harness) call(ctx context.Context, server, tool string, args map[string]any) (string, error) {
	res, err := h.CallTool(ctx, server, tool, args)
	if err != nil {
		return "", err
	}
	return firstText(res.Content), nil
}

// children returns the pids of this process's children.
func children(t testing.TB) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	self := strconv.Itoa(os.Getpid())
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == self && f[0] != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

// parallel runs f n times concurrently and waits.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { f(i) })
	}
	wg.Wait()
}
