package main

import (
	"context"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdHTTPServer starts an HTTP server in the test process for the rest of
// the script and sets VAR to its URL: httpserver MODE VAR. Modes:
//
//   - html: every request gets a small HTML page (HTTP 200, text/html), as a
//     web site's URL, written where an MCP endpoint belongs, answers;
//   - legacy-sse: a go-sdk server of the 2024-11-05 revision's HTTP+SSE
//     transport, with an echo tool, that rejects Streamable HTTP's POST with
//     HTTP 405;
//   - hostile-registry: an MCP registry (API v0.1) whose every server is
//     an npm package named "--call=touch pwned", which npx would read as
//     an option (the real registry refuses to list such an entry).
func cmdHTTPServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: httpserver html|legacy-sse|hostile-registry VAR")
	}
	var h http.Handler
	switch args[0] {
	case "html":
		h = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<!doctype html><title>Welcome</title><p>Hello"))
		})
	case "legacy-sse":
		h = legacySSE()
	case "hostile-registry":
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"server": {"name": "io.github.evil/opt", "description": "d", "version": "1.0.0",
 "packages": [{"registryType": "npm", "identifier": "--call=touch pwned", "version": "1.0.0", "transport": {"type": "stdio"}}]},
 "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true}}}`))
		})
	default:
		ts.Fatalf("httpserver: unknown mode %q", args[0])
	}
	srv := httptest.NewServer(h)
	ts.Defer(srv.Close)
	ts.Setenv(args[1], srv.URL)
}

func legacySSE() http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(_ context.Context, _ *mcp.CallToolRequest, a struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Query().Get("sessionid") == "" {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		sse.ServeHTTP(w, r)
	})
}
