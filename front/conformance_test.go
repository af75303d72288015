package front

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestConformanceSuite runs the official conformance server suite against
// the gateway over Streamable HTTP, in transparent mode in front of go-sdk's
// conformance everything-server. Every scenario must pass but those listed
// in testdata/mcp-peers/gateway-server-baseline.yml. scripts/conformance.sh
// runs the same suite against the real binary.
//
// Over stdio, the same server is reached by the fast lane (see fastLane):
// the suite must pass the same, and the lane must have taken calls.
func TestConformanceSuite(t *testing.T) {
	t.Run("http", func(t *testing.T) {
		testConformanceSuite(t, def{"url": mcptest.StatefulConformanceServer(t)})
	})
	t.Run("stdio", func(t *testing.T) {
		// Over stdio Switchboard speaks 2025-11-25 by default
		// (upstream/negotiate.go), where every scenario applies: at
		// 2026-07-28 ("latest") this server's tools may not send requests
		// to the client (it wants multi round-trip results instead),
		// whichever path the call takes.
		g := testConformanceSuite(t, def{"command": mcptest.ConformanceStdio(t)})
		if g.fastCalls() == 0 {
			t.Error("the fast lane took none of the suite's calls")
		}
		t.Logf("the fast lane took %d calls", g.fastCalls())
	})
}

func testConformanceSuite(t *testing.T, upstream def) *testGateway {
	mcptest.CheckNoLeaks(t)
	peers := mcptest.Peers(t)
	// The gateway's log (refusals of a server's requests among it) is shown
	// when the suite fails.
	var log syncBuffer
	g := newGatewayWith(t, map[string]def{"conformance": upstream}, map[string]any{"toolPrefix": "none"},
		Options{Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	ts := g.serveHTTP(t, HTTPOptions{NoFastLane: os.Getenv("DBG_SLOW") != ""})

	baseline, err := filepath.Abs("../testdata/mcp-peers/gateway-server-baseline.yml")
	if err != nil {
		t.Fatal(err)
	}
	results := t.TempDir()
	cmd := peers.ServerSuite(ts.URL+"/mcp", baseline, results).Cmd(t)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The suite takes a few seconds; a hang fails here rather than at the
	// go test timeout.
	stop := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	err = cmd.Wait()
	stop.Stop()
	if err != nil {
		t.Fatalf("conformance server suite through the gateway: %v\n%s\nfailed checks:\n%s\nthe gateway's warnings:\n%s", err, out.Bytes(), failedChecks(results), log.String())
	}
	t.Logf("conformance server suite through the gateway:\n%s", summary(out.String()))
	return g
}

// failedChecks returns the checks of the suite's results under dir that
// did not pass, as the suite wrote them, so that a failure shows its cause.
func failedChecks(dir string) string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var checks []map[string]any
		if json.Unmarshal(data, &checks) != nil {
			continue
		}
		for _, c := range checks {
			if c["status"] == "FAILURE" {
				line, _ := json.Marshal(c)
				fmt.Fprintf(&b, "%s: %s\n", filepath.Base(filepath.Dir(f)), line)
			}
		}
	}
	return b.String()
}

// summary returns the suite's summary: one line per scenario, the totals
// and the baseline check.
func summary(out string) string {
	if _, after, ok := strings.Cut(out, "=== SUMMARY ==="); ok {
		return strings.TrimSpace(after)
	}
	return out
}

// syncBuffer is a bytes.Buffer that goroutines may write at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
