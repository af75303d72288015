package upstream_test

import (
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/upstream"
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
				var pids []int
				for _, tool := range []string{"pid", "spawn"} {
					res, err := p.CallTool(t.Context(), "f", tool, nil)
					if err != nil {
						p.Close()
						t.Fatal(err)
					}
					pid, err := strconv.Atoi(firstText(res.Content))
					if err != nil {
						p.Close()
						t.Fatalf("%s answered %q", tool, firstText(res.Content))
					}
					pids = append(pids, pid)
				}
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
