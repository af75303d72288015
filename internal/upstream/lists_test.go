package upstream_test

import (
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestListsFetchedOncePerConnection checks that callers asking for the
// same list of the same connection at once share one fetch: each page is
// requested once per connection, however many ask.
func TestListsFetchedOncePerConnection(t *testing.T) {
	srv := mcptest.ServeCounted(t, mcptest.ManyServer(10000))
	s := &config.Server{Name: "many", Type: config.TransportHTTP, URL: srv.URL, RequestTimeout: time.Minute, ProtocolVersion: "auto"}
	h := newPool(t, []*config.Server{s}, nil)

	ask := func() {
		parallel(8, func(i int) {
			var n int
			var err error
			switch i % 3 {
			case 0:
				var tools []*mcp.Tool
				tools, err = h.Tools(t.Context(), "many")
				n = len(tools) - 10000
			case 1:
				var res []*mcp.Resource
				res, err = h.Resources(t.Context(), "many")
				n = len(res) - 1
			case 2:
				var ps []*mcp.Prompt
				ps, err = h.Prompts(t.Context(), "many")
				n = len(ps) - 1
			}
			if err != nil || n != 0 {
				t.Errorf("caller %d: %d items too many, err %v", i, n, err)
			}
		})
	}
	want := func(conns int) {
		t.Helper()
		for method, per := range map[string]int{"tools/list": 10, "resources/list": 1, "prompts/list": 1} {
			if got := srv.Count(method); got != per*conns {
				t.Errorf("after %d connections: %d %s requests, want %d", conns, got, method, per*conns)
			}
		}
	}
	ask()
	want(1)
	ask() // cached
	want(1)
	if err := h.Reconnect(t.Context(), "many"); err != nil {
		t.Fatal(err)
	}
	if st := h.status("many"); st.Generation != 2 || st.State != upstream.StateConnected {
		t.Fatalf("after reconnect: %+v, want connected, generation 2", st)
	}
	ask()
	want(2)
}
