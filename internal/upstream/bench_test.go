package upstream_test

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// A benchServer is a stdio server to measure, with a cheap tool call.
type benchServer struct {
	cfg  *config.Server
	tool string
	args map[string]any
}

func benchServers(b *testing.B) map[string]benchServer {
	out := map[string]benchServer{
		"fixture": {fixture("fixture", testserver.Good), "echo", map[string]any{"text": "hi"}},
	}
	if p, err := peersIfInstalled(b); err == nil {
		out["everything"] = benchServer{stdioPeer("everything", p.Everything()), "echo", map[string]any{"message": "hi"}}
	}
	return out
}

func peersIfInstalled(b *testing.B) (p mcptest.PeerSet, err error) {
	// Peers skips (or fails) the benchmark it is given: give it a throwaway one.
	b.Run("peers", func(b *testing.B) { p = mcptest.Peers(b); b.SkipNow() })
	if p.Dir == "" {
		return p, os.ErrNotExist
	}
	return p, nil
}

// BenchmarkSpawnToReady measures a lazy server's first use: spawning the
// child and initializing the session.
func BenchmarkSpawnToReady(b *testing.B) {
	for name, s := range benchServers(b) {
		b.Run(name, func(b *testing.B) {
			mcptest.CheckNoLeaks(b)
			var lat []time.Duration
			for b.Loop() {
				p := upstream.New([]*config.Server{s.cfg}, &upstream.Options{BaseEnv: benchEnv()})
				start := time.Now()
				if _, err := p.Instructions(b.Context(), s.cfg.Name); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				b.StopTimer()
				p.Close()
				b.StartTimer()
			}
			report(b, "", lat)
		})
	}
}

// BenchmarkCallTool measures tools/call round trips through the pool and
// through a bare go-sdk client on its own child of the same server,
// alternating, and reports the pool's overhead.
func BenchmarkCallTool(b *testing.B) {
	for name, s := range benchServers(b) {
		b.Run(name, func(b *testing.B) {
			mcptest.CheckNoLeaks(b)
			ctx := b.Context()
			p := upstream.New([]*config.Server{s.cfg}, &upstream.Options{BaseEnv: benchEnv()})
			defer p.Close()
			bare := bareSession(b, s.cfg)
			defer bare.Close()
			params := &mcp.CallToolParams{Name: s.tool, Arguments: s.args}
			if _, err := p.CallTool(ctx, s.cfg.Name, s.tool, s.args); err != nil {
				b.Fatal(err)
			}
			var viaPool, viaSDK []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := p.CallTool(ctx, s.cfg.Name, s.tool, s.args); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if _, err := bare.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
				viaPool, viaSDK = append(viaPool, mid.Sub(start)), append(viaSDK, time.Since(mid))
			}
			report(b, "pool-", viaPool)
			report(b, "sdk-", viaSDK)
			b.ReportMetric(float64(percentile(viaPool, 50)-percentile(viaSDK, 50))/1e3, "overhead-p50-µs")
		})
	}
}

// bareSession connects a plain go-sdk client to a new child of s.
func bareSession(b *testing.B, s *config.Server) *mcp.ClientSession {
	cmd := exec.Command(s.Command, s.Args...)
	cmd.Env = benchEnv()
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "0"}, nil)
	cs, err := c.Connect(b.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return cs
}

func benchEnv() []string {
	return append(upstream.BaseEnv(os.Environ()), mcptest.OwnerEnv+"="+os.Getenv(mcptest.OwnerEnv))
}

func report(b *testing.B, prefix string, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(float64(percentile(lat, 50))/1e3, prefix+"p50-µs")
	b.ReportMetric(float64(percentile(lat, 99))/1e3, prefix+"p99-µs")
}

func percentile(lat []time.Duration, p int) time.Duration {
	s := slices.Clone(lat)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}
