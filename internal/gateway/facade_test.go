package gateway

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// FuzzFacadeCall sends a facade whatever arguments a model might: the call
// never panics, and whatever reaches the tool holds the fixed values and
// only the arguments the facade passes on, under their names for the tool.
func FuzzFacadeCall(f *testing.F) {
	for _, seed := range []string{`{"n":5}`, `{}`, `null`, `[1]`, `"x"`, `{"n":"5"}`, `{"n":1,"sql":"drop"}`, `{"n":1e400}`, `{"n":12345678901234567890}`} {
		f.Add(seed)
	}
	fc, err := newFacade(host.Facade{
		Name: "recent", Description: "Recent orders.", Server: "shop", Tool: "query",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
		Fixed:       map[string]any{"sql": "select 1"}, Rename: map[string]string{"n": "limit"},
	})
	if err != nil {
		f.Fatal(err)
	}
	query := &mcp.Tool{Name: "query", InputSchema: map[string]any{"type": "object",
		"properties": map[string]any{"sql": map[string]any{"type": "string"}, "limit": map[string]any{"type": "integer"}}, "required": []any{"sql"}}}
	fs := &facades{byServer: map[string][]*facade{"shop": {fc}}}
	listed := []*mcp.Tool{query}
	fs.Tools("shop", listed)
	f.Fuzz(func(t *testing.T, args string) {
		var sent *mcp.CallToolParams
		c := &upstream.ToolCall{Server: "shop", Params: &mcp.CallToolParams{Name: "recent", Arguments: json.RawMessage(args)},
			Tools: func(context.Context) ([]*mcp.Tool, error) { return fs.Tools("shop", listed), nil },
			Send: func(_ context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
				sent = p
				return &mcp.CallToolResult{}, nil
			}}
		res, err := fs.Call(context.Background(), c)
		if err != nil {
			t.Fatalf("Call: %v", err)
		}
		if sent == nil {
			if !res.IsError {
				t.Fatalf("args %s: nothing sent, and no error result", args)
			}
			return
		}
		got, ok := sent.Arguments.(map[string]any)
		if !ok || sent.Name != "query" || got["sql"] != "select 1" {
			t.Fatalf("args %s: sent %s %#v, want query with sql fixed", args, sent.Name, sent.Arguments)
		}
		for k := range got {
			if k != "sql" && k != "limit" {
				t.Fatalf("args %s: sent argument %q, which the facade does not pass", args, k)
			}
		}
		if _, ok := got["limit"]; !ok {
			t.Fatalf("args %s: sent without limit, which the facade requires", args)
		}
	})
}
