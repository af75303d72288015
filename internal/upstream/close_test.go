package upstream_test

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestCloseEndsLingeringServers closes pools whose server does not exit
// when its input ends (as most Node servers do not), or also ignores
// SIGTERM: Close must still end the server and what it started, after the
// grace period, with or without a supervisor. Nothing may survive.
func TestCloseEndsLingeringServers(t *testing.T) {
	for _, mode := range []string{testserver.Linger, testserver.Stubborn} {
		for _, supervise := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/supervise=%v", mode, supervise), func(t *testing.T) {
				mcptest.CheckNoLeaks(t)
				p := upstream.New([]*config.Server{fixture("f", mode)}, &upstream.Options{
					BaseEnv:   append(upstream.BaseEnv(os.Environ()), mcptest.OwnerEnv+"="+os.Getenv(mcptest.OwnerEnv)),
					GroupDir:  t.TempDir(),
					Supervise: supervise,
					Logger:    slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
				})
				pids := []int{callPID(t, p, "f", "pid"), callPID(t, p, "f", "spawn")}
				p.Close()
				for _, pid := range pids {
					if mcptest.Alive(pid) {
						t.Errorf("process %d (server, then its child) survived Close", pid)
					}
				}
			})
		}
	}
}

// TestCloseTimeoutKills closes a pool whose servers would each take an
// hour to stop on their own (they linger after their input ends, and the
// grace before SIGTERM is an hour): past CloseTimeout, Close kills them,
// the one it shuts down on its own goroutine as well as the other.
func TestCloseTimeoutKills(t *testing.T) {
	for _, supervise := range []bool{false, true} {
		t.Run(fmt.Sprintf("supervise=%v", supervise), func(t *testing.T) {
			mcptest.CheckNoLeaks(t)
			p := upstream.New([]*config.Server{fixture("f", testserver.Linger), fixture("g", testserver.Linger)}, &upstream.Options{
				BaseEnv:          append(upstream.BaseEnv(os.Environ()), mcptest.OwnerEnv+"="+os.Getenv(mcptest.OwnerEnv)),
				GroupDir:         t.TempDir(),
				Supervise:        supervise,
				TerminateTimeout: time.Hour,
				CloseTimeout:     200 * time.Millisecond,
				Logger:           slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelError})),
			})
			pids := []int{callPID(t, p, "f", "pid"), callPID(t, p, "g", "pid")}
			closed := make(chan struct{})
			go func() { p.Close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(time.Minute): // a hang, not a speed: the servers would take an hour
				t.Fatal("Close did not return a minute after CloseTimeout")
			}
			for _, pid := range pids {
				if mcptest.Alive(pid) {
					t.Errorf("server %d survived Close", pid)
				}
			}
		})
	}
}

// callPID calls a tool of the server that answers with a pid (pid: the
// server's own; spawn: a child it started), and returns it. On failure it
// closes the pool, then fails the test.
func callPID(t *testing.T, p *upstream.Pool, server, tool string) int {
	t.Helper()
	res, err := p.CallTool(t.Context(), server, tool, nil)
	if err != nil {
		p.Close()
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(firstText(res.Content))
	if err != nil {
		p.Close()
		t.Fatalf("%s of %s answered %q", tool, server, firstText(res.Content))
	}
	return pid
}
