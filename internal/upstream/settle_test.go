package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestOnReachSettles: an operation made with OnReach returns only once the
// log message its server sent before the answer has been handled, and the
// handler knows the server it came from (ServerOf); OnReach is told of the
// server before anything is sent. go-sdk hands over the answer first as
// often as not (on the fast path, which skips go-sdk's reading, most
// often): without the marks, a gateway gave a call's log messages to
// whoever called the server next. Over stdio (go-sdk's path and the fast
// path) and in-process.
func TestOnReachSettles(t *testing.T) {
	path, args, env := hostile.Command(hostile.Router)
	stdio := &config.Server{Name: "r", Type: config.TransportStdio, Command: path, Args: args, Env: env,
		RequestTimeout: 20 * time.Second, ProtocolVersion: "auto", Lifecycle: config.LifecycleLazy}
	inproc := &config.Server{Name: "r", Type: config.TransportInProcess, RequestTimeout: 20 * time.Second, ProtocolVersion: "2025-11-25", Lifecycle: config.LifecycleLazy}
	// Over HTTP, the answer and the log messages before it come on the
	// call's own event stream (Streamable HTTP) or on the one stream
	// (legacy SSE), which go-sdk reads and Switchboard marks as it passes.
	streamable := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return loggingServer() }, nil))
	t.Cleanup(streamable.Close)
	sse := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return loggingServer() }, nil))
	t.Cleanup(sse.Close)
	overHTTP := &config.Server{Name: "r", Type: config.TransportHTTP, URL: streamable.URL, RequestTimeout: 20 * time.Second, ProtocolVersion: "2025-11-25", Lifecycle: config.LifecycleLazy}
	overSSE := &config.Server{Name: "r", Type: config.TransportSSE, URL: sse.URL, RequestTimeout: 20 * time.Second, ProtocolVersion: "2025-11-25", Lifecycle: config.LifecycleLazy}
	for _, tc := range []struct {
		name string
		srv  *config.Server
		raw  bool
	}{{"stdio", stdio, false}, {"stdio fast path", stdio, true}, {"in-process", inproc, false}, {"streamable HTTP", overHTTP, false}, {"legacy SSE", overSSE, false}} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			heard := map[string]string{} // message → server
			opts := &upstream.Options{Client: &mcp.ClientOptions{LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
				mu.Lock()
				heard[fmt.Sprint(req.Params.Data)] = upstream.ServerOf(ctx)
				mu.Unlock()
			}}}
			if tc.srv.Type == config.TransportInProcess {
				opts.InProcess = map[string]*mcp.Server{"r": loggingServer()}
			}
			h := newPool(t, []*config.Server{tc.srv}, opts)
			if err := h.SetLoggingLevel(t.Context(), "r", "debug"); err != nil { // for the in-process server, which heeds it
				t.Fatal(err)
			}
			for i := range 200 {
				msg := fmt.Sprintf("m%d", i)
				var reached []string
				ctx := upstream.OnReach(t.Context(), func(server string) { reached = append(reached, server) })
				args := map[string]any{"kind": "log", "message": msg}
				var res *mcp.CallToolResult
				var err error
				if tc.raw {
					raw, _ := json.Marshal(args)
					_, res, err = h.CallToolRaw(ctx, "r", "do", raw)
				} else {
					res, err = h.CallTool(ctx, "r", "do", args)
				}
				if err != nil {
					t.Fatal(err)
				}
				if res != nil && res.IsError {
					t.Fatalf("call %d: %v", i, res.Content)
				}
				mu.Lock()
				from, ok := heard[msg]
				mu.Unlock()
				if !ok || from != "r" || len(reached) != 1 || reached[0] != "r" {
					t.Fatalf("call %d returned with its log message heard %v (from %q), reach told %q; want heard from r, told r", i, ok, from, reached)
				}
			}
			if tc.raw && h.FastCalls() == 0 {
				t.Error("no call took the fast path")
			}
		})
	}
}

// loggingServer is a go-sdk server whose tool "do" sends its message as a
// log message, then answers.
func loggingServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "logger", Version: "1"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{}}})
	mcp.AddTool(s, &mcp.Tool{Name: "do", Description: "Logs its message."},
		func(ctx context.Context, req *mcp.CallToolRequest, a struct {
			Kind    string `json:"kind"` // "log": the router's argument, taken for the same calls
			Message string `json:"message"`
		}) (*mcp.CallToolResult, any, error) {
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Data: a.Message}); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil, nil
		})
	return s
}
