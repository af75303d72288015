package switchboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
)

// TestBearerToken: a server's bearerToken (pi-mcp-adapter's field), a
// reference, reaches its server as "Authorization: Bearer …", and a call
// works; without the variable the server is not called with an empty one.
func TestBearerToken(t *testing.T) {
	const token = "bearer-test-value-42"
	s := mcp.NewServer(&mcp.Implementation{Name: "auth", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "whoami"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "let in"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()

	home := t.TempDir()
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"api": map[string]any{"url": ts.URL, "bearerToken": "${SB_BEARER_TEST}"},
	}})
	d := config.Dirs{Home: home}
	os.MkdirAll(filepath.Dir(d.UserFile()), 0o700)
	if err := os.WriteFile(d.UserFile(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SB_BEARER_TEST", token)
	eng, err := switchboard.New(t.Context(), config.Load(d), &switchboard.Options{SpillDir: filepath.Join(home, "spill")})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	r := eng.Handle(t.Context(), json.RawMessage(`{"tool":"whoami","server":"api"}`))
	if r.IsError || !strings.Contains(r.Text, "let in") {
		t.Fatalf("call with bearerToken: %s", r.Text)
	}
	if strings.Contains(r.Text, token) {
		t.Error("the answer shows the token")
	}
}
