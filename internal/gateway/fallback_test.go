package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server defined by a "url" without a "type", whose URL rejects
// Streamable HTTP's POST (HTTP 405) and speaks legacy SSE, is used over
// legacy SSE, and status says so.
func TestStatusShowsSSEFallback(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."}, func(_ context.Context, _ *mcp.CallToolRequest, a struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Query().Get("sessionid") == "" {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		sse.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	e := newEngine(t, map[string]def{"legacy": {"url": ts.URL}}, nil)
	wantText(t, must(t, e, `{"tool":"echo","server":"legacy","args":{"text":"over sse"}}`), "over sse")
	r := must(t, e, `{}`)
	const note = "connected over legacy SSE: the URL rejected Streamable HTTP (HTTP 405)"
	wantText(t, r, note)
	for _, st := range r.Details.Servers {
		if st.Name == "legacy" && st.Transport != "sse" {
			t.Errorf("status transport %q; want sse", st.Transport)
		}
	}
}
