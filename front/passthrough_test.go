package front

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestToolsListChanged checks that a client hears tools/list_changed, and
// then sees the new tool, when a server adds one: in transparent mode, and
// for direct tools (directTools: true) beside the mcp tool.
func TestToolsListChanged(t *testing.T) {
	tests := []struct {
		name     string
		def      func() def
		settings map[string]any
		add      string // tool that adds a tool
		exposed  string // name the new tool is listed under
	}{
		{"transparent", fixture, map[string]any{"toolPrefix": "none"}, "add-tool", "brand-new"},
		{"direct tools", func() def { f := fixture(); f["directTools"] = true; return f }, nil, "f_add-tool", "f_brand-new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mcptest.CheckNoLeaks(t)
			g := newGateway(t, map[string]def{"f": tt.def()}, tt.settings)
			changed := make(chan struct{}, 10)
			cs := g.connect(t, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
			})
			if got := toolNames(t, cs); slices.Contains(got, tt.exposed) {
				t.Fatalf("tools = %v before the server added %s", got, tt.exposed)
			}
			call(t, cs, tt.add, map[string]any{"text": "brand-new"})
			// The gateway refreshes its list in the background; wait for
			// the notification, then for the list to hold the tool (a
			// notification may come for an earlier change).
			deadline := time.After(20 * time.Second)
			for {
				select {
				case <-changed:
				case <-deadline:
					t.Fatalf("no tools/list_changed listing %s within 20s; tools = %v", tt.exposed, toolNames(t, cs))
				}
				if slices.Contains(toolNames(t, cs), tt.exposed) {
					break
				}
			}
			if r := call(t, cs, tt.exposed, map[string]any{}); text(r) != "added" {
				t.Errorf("%s = %q, want added", tt.exposed, text(r))
			}
		})
	}
}

// TestCancel cancels a call in transparent mode while the server works on
// it and checks that the client gets control back at once and that the
// shared connection stays usable.
func TestCancel(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"f": fixture()}, map[string]any{"toolPrefix": "none"})
	cs := g.connect(t, nil)
	file := filepath.Join(t.TempDir(), "calls")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "record", Arguments: map[string]any{"file": file, "then": "hang"}})
		done <- err
	}()
	for deadline := time.Now().Add(20 * time.Second); ; {
		if data, _ := os.ReadFile(file); len(data) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call never reached the server")
		}
		time.Sleep(10 * time.Millisecond) // polling a file the child writes: there is no event to wait on
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled call: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call did not return within 5s")
	}
	if r := call(t, cs, "echo", map[string]any{"text": "still here"}); text(r) != "still here" {
		t.Errorf("after a cancelled call: %q", text(r))
	}
}
