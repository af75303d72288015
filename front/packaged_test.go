package front

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// A packaged server's DirectTools and a facade marked Direct are tools of
// the gateway of their own; made exclusive, the facade's tool is reachable
// neither directly nor through the mcp tool.
func TestFacadeDirectTool(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	var mu sync.Mutex
	var received []map[string]any
	notes := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	mcp.AddTool(notes, &mcp.Tool{Name: "find", Description: "Finds notes.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"}},"required":["query"]}`)},
		func(_ context.Context, _ *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			received = append(received, args)
			mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found " + args["query"].(string)}}}, nil, nil
		})
	mcp.AddTool(notes, &mcp.Tool{Name: "count", Description: "Counts notes."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "12 notes"}}}, nil, nil
		})
	home := t.TempDir()
	srv, err := New(t.Context(), config.Load(config.Dirs{Home: home}), &Options{Engine: switchboard.Options{
		SpillDir: filepath.Join(home, "spill"),
		Servers:  []host.Server{{Name: "notes", Server: notes, DirectTools: []string{"count"}}},
		Facades: []host.Facade{{
			Name: "recent_notes", Description: "Finds the three latest notes about a subject.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"subject":{"type":"string"}},"required":["subject"]}`),
			Server:      "notes", Tool: "find", Fixed: map[string]any{"limit": 3}, Rename: map[string]string{"subject": "query"},
			Direct: true, Exclusive: true,
		}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	g := &testGateway{srv: srv}
	cs := g.connect(t, nil)

	if got := toolNames(t, cs); !slices.Equal(got, []string{"mcp", "notes_count", "notes_recent_notes"}) {
		t.Fatalf("tools = %v, want mcp, notes_count (the host's direct tool) and notes_recent_notes (its direct facade)", got)
	}
	if r := call(t, cs, "notes_count", map[string]any{}); text(r) != "12 notes" {
		t.Errorf("notes_count = %q, want 12 notes", text(r))
	}
	if r := call(t, cs, "notes_recent_notes", map[string]any{"subject": "tides"}); text(r) != "found tides" || r.IsError {
		t.Errorf("notes_recent_notes = %q (error %v), want found tides", text(r), r.IsError)
	}
	if r := call(t, cs, "notes_recent_notes", map[string]any{"subject": 4}); !r.IsError || !strings.Contains(text(r), `invalid arguments for "recent_notes"`) {
		t.Errorf("notes_recent_notes with a bad subject = %q (error %v), want an error about its arguments", text(r), r.IsError)
	}
	if r := call(t, cs, "mcp", map[string]any{"tool": "notes_find", "args": map[string]any{"query": "x"}}); !r.IsError {
		t.Errorf("the hidden tool through the mcp tool: %q, want an error", text(r))
	}
	if r := call(t, cs, "mcp", map[string]any{"tool": "notes_recent_notes", "args": map[string]any{"subject": "waves"}}); r.IsError || !strings.Contains(text(r), "found waves") {
		t.Errorf("the facade through the mcp tool: %q, want found waves", text(r))
	}
	mu.Lock()
	defer mu.Unlock()
	want := []map[string]any{{"query": "tides", "limit": float64(3)}, {"query": "waves", "limit": float64(3)}}
	if diff := cmp.Diff(want, received); diff != "" {
		t.Errorf("find received (-want +got):\n%s", diff)
	}
}
