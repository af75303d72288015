package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestTruthScripts runs testdata/truth/*.txtar, on what errors and status
// say about servers that cannot be used. $FIXTURE is the fixture server's
// executable (choose its mode with SWITCHBOARD_TESTSERVER in its env);
// $AUTH_URL answers every request with HTTP 401; $API_URL is an MCP server
// with an echo tool that answers a tools/call holding "revoked" with 401;
// $OAUTH_URL is an MCP server with an echo tool behind an OAuth login.
func TestTruthScripts(t *testing.T) {
	fixture, _, _ := testserver.Command(testserver.Good)
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(auth.Close)
	api := httptest.NewServer(revokedCalls(echoServer()))
	t.Cleanup(api.Close)
	as := oauthtest.New(t, oauthtest.Options{})
	testscript.Run(t, scriptParams("testdata/truth", map[string]string{"FIXTURE": fixture, "AUTH_URL": auth.URL, "API_URL": api.URL, "OAUTH_URL": as.URL()}))
}

// echoServer is a Streamable HTTP MCP server with an echo tool.
func echoServer() http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "api", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(_ context.Context, _ *mcp.CallToolRequest, a struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

// revokedCalls answers HTTP 401 to a tools/call whose body holds "revoked",
// as a server does whose token was revoked after the client connected.
func revokedCalls(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) && bytes.Contains(body, []byte("revoked")) {
			http.Error(w, "token revoked", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
