package upstream_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// stdioPeer returns a server definition running an npm peer.
func stdioPeer(name string, c mcptest.Command) *config.Server {
	env := make(map[string]string)
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return &config.Server{Name: name, Type: config.TransportStdio, Command: c.Path, Args: c.Args, Env: env,
		RequestTimeout: 30 * time.Second, ProtocolVersion: "auto"}
}

func httpPeer(name string, typ config.Transport, url string) *config.Server {
	return &config.Server{Name: name, Type: typ, URL: url, RequestTimeout: 30 * time.Second, ProtocolVersion: "auto"}
}

// TestPeers runs every operation against real servers over every transport.
func TestPeers(t *testing.T) {
	peers := mcptest.Peers(t)
	mcptest.CheckNoLeaks(t)
	tests := []struct {
		server *config.Server
		tool   string
		args   map[string]any
		want   string
	}{
		{stdioPeer("everything", peers.Everything()), "echo", map[string]any{"message": "hi"}, "hi"},
		{stdioPeer("filesystem", peers.Filesystem(t.TempDir())), "list_allowed_directories", nil, "Allowed directories"},
		{stdioPeer("memory", peers.Memory(t.TempDir()+"/memory.jsonl")), "read_graph", nil, "entities"},
		{httpPeer("everything-http", config.TransportHTTP, peers.ServeEverything(t, mcptest.StreamableHTTP)), "echo", map[string]any{"message": "hi"}, "hi"},
		{httpPeer("everything-sse", config.TransportSSE, peers.ServeEverything(t, mcptest.SSE)), "echo", map[string]any{"message": "hi"}, "hi"},
		{httpPeer("conformance", config.TransportHTTP, mcptest.ConformanceServer(t)), "test_simple_text", nil, "This is a simple text response for testing."},
	}
	var servers []*config.Server
	for _, tt := range tests {
		servers = append(servers, tt.server)
	}
	h := newPool(t, servers, nil)
	for _, tt := range tests {
		t.Run(tt.server.Name, func(t *testing.T) {
			ctx := t.Context()
			tools, err := h.Tools(ctx, tt.server.Name)
			if err != nil || len(tools) == 0 {
				t.Fatalf("Tools = %d tools, %v", len(tools), err)
			}
			got, err := h.call(ctx, tt.server.Name, tt.tool, tt.args)
			if err != nil || !strings.Contains(got, tt.want) {
				t.Errorf("%s = %q, %v; want %q", tt.tool, got, err, tt.want)
			}
			if _, err := h.Resources(ctx, tt.server.Name); err != nil {
				t.Errorf("Resources: %v", err)
			}
			if _, err := h.Prompts(ctx, tt.server.Name); err != nil {
				t.Errorf("Prompts: %v", err)
			}
			st := h.status(tt.server.Name)
			if st.State != upstream.StateConnected || st.Tools != len(tools) {
				t.Errorf("status %+v", st)
			}
			t.Logf("%d tools, protocol %s", len(tools), st.Protocol)
		})
	}
	start := time.Now()
	h.Close()
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Close took %s", d)
	}
}
