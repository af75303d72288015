package mcptest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// connectTimeout bounds one connection and tools/list, so that a hanging peer
// fails the test instead of the whole run.
const connectTimeout = 30 * time.Second

// listTools connects a go-sdk client over transport and returns the names of
// the server's tools. The session is closed when the test ends.
func listTools(t *testing.T, transport mcp.Transport) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), connectTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "switchboard-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Logf("closing session: %v", err)
		}
	})
	t.Logf("negotiated protocol version %s", cs.InitializeResult().ProtocolVersion)
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("listing tools: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// checkTools fails the test unless got holds every name in want.
func checkTools(t *testing.T, got, want []string) {
	t.Helper()
	for _, name := range want {
		if !slices.Contains(got, name) {
			t.Errorf("tools/list: missing %q; got %q", name, got)
		}
	}
}

func TestStdioPeers(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	peers := mcptest.Peers(t)
	tests := []struct {
		name    string
		command mcptest.Command
		want    []string
	}{
		{"everything", peers.Everything(), []string{"echo", "get-sum", "get-tiny-image", "trigger-long-running-operation"}},
		{"filesystem", peers.Filesystem(t.TempDir()), []string{"read_text_file", "write_file", "list_directory"}},
		{"memory", peers.Memory(t.TempDir() + "/memory.jsonl"), []string{"create_entities", "read_graph"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			transport := &mcp.CommandTransport{
				Command: tt.command.Cmd(t),
				// server-everything does not exit on EOF while its roots/list request
				// (sent 350ms after initialization) is unanswered; do not wait long.
				TerminateDuration: 500 * time.Millisecond,
			}
			checkTools(t, listTools(t, transport), tt.want)
		})
	}
}

func TestServeEverything(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	peers := mcptest.Peers(t)
	want := []string{"echo", "get-sum"}
	t.Run("streamableHttp", func(t *testing.T) {
		url := peers.ServeEverything(t, mcptest.StreamableHTTP)
		checkTools(t, listTools(t, &mcp.StreamableClientTransport{Endpoint: url}), want)
	})
	t.Run("sse", func(t *testing.T) {
		url := peers.ServeEverything(t, mcptest.SSE)
		checkTools(t, listTools(t, &mcp.SSEClientTransport{Endpoint: url}), want)
	})
}

func TestConformanceServer(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	url := mcptest.ConformanceServer(t)
	got := listTools(t, &mcp.StreamableClientTransport{Endpoint: url})
	checkTools(t, got, []string{"test_simple_text", "test_error_handling"})
}
