package front

import (
	"bytes"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/mcptest"
)

// TestConformanceSuite runs the official conformance server suite against
// the gateway over Streamable HTTP, in transparent mode in front of go-sdk's
// conformance everything-server. Every scenario must pass but those listed
// in testdata/mcp-peers/gateway-server-baseline.yml. scripts/conformance.sh
// runs the same suite against the real binary.
func TestConformanceSuite(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	peers := mcptest.Peers(t)
	upstream := mcptest.StatefulConformanceServer(t)
	g := newGateway(t, map[string]def{"conformance": {"url": upstream}}, map[string]any{"toolPrefix": "none"})
	h, err := g.srv.Handler(HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()

	baseline, err := filepath.Abs("../testdata/mcp-peers/gateway-server-baseline.yml")
	if err != nil {
		t.Fatal(err)
	}
	cmd := peers.ServerSuite(ts.URL+"/mcp", baseline, t.TempDir()).Cmd(t)
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
		t.Fatalf("conformance server suite through the gateway: %v\n%s", err, out.Bytes())
	}
	t.Logf("conformance server suite through the gateway:\n%s", summary(out.String()))
}

// summary returns the suite's summary: one line per scenario, the totals
// and the baseline check.
func summary(out string) string {
	if _, after, ok := strings.Cut(out, "=== SUMMARY ==="); ok {
		return strings.TrimSpace(after)
	}
	return out
}
