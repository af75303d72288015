package upstream_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
)

// socketServer serves a go-sdk server on a Unix socket, one session per
// connection, as a multiplexer such as rmcp-mux does, and returns the
// socket's path and how many connections it has taken.
func socketServer(t *testing.T) (string, func() int) {
	t.Helper()
	dir, err := os.MkdirTemp("", "sbsock") // short: a socket's path is bounded
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "mux.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "mux", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	var mu sync.Mutex
	var wg sync.WaitGroup
	accepted := 0
	ctx, cancel := context.WithCancel(context.Background())
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted++
			mu.Unlock()
			ss, err := s.Connect(ctx, &mcp.IOTransport{Reader: c, Writer: c}, nil)
			if err != nil {
				c.Close()
				continue
			}
			wg.Add(1)
			go func() { defer wg.Done(); ss.Wait() }()
		}
	}()
	t.Cleanup(func() { l.Close(); cancel(); wg.Wait() })
	return path, func() int { mu.Lock(); defer mu.Unlock(); return accepted }
}

// TestSocketTransport: a "socket" server is reached over its Unix socket
// and called; closing the pool closes only Switchboard's end (the program
// behind the socket goes on, and takes a new connection); a socket no one
// serves is an error that says so and names the path.
func TestSocketTransport(t *testing.T) {
	path, accepted := socketServer(t)
	srv := &config.Server{Name: "mux", Type: config.TransportSocket, Socket: path, ProtocolVersion: "auto"}
	gone := &config.Server{Name: "gone", Type: config.TransportSocket, Socket: filepath.Join(filepath.Dir(path), "none.sock"), ProtocolVersion: "auto"}
	h := newPool(t, []*config.Server{srv, gone}, nil)
	if got, err := h.call(t.Context(), "mux", "echo", map[string]any{"text": "over the socket"}); err != nil || got != "over the socket" {
		t.Fatalf("call: %q, %v", got, err)
	}
	_, err := h.Tools(t.Context(), "gone")
	if err == nil || !strings.Contains(err.Error(), "none.sock") || !strings.Contains(err.Error(), "is the program that serves it running") {
		t.Errorf("a socket no one serves: %v", err)
	}
	h.Close()
	h2 := newPool(t, []*config.Server{srv}, nil)
	if got, err := h2.call(t.Context(), "mux", "echo", map[string]any{"text": "again"}); err != nil || got != "again" {
		t.Fatalf("after the first pool closed: %q, %v", got, err)
	}
	if n := accepted(); n != 2 {
		t.Errorf("the program behind the socket took %d connections, want 2", n)
	}
}
