package front

import (
	"context"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestDirectToolsOnDemand: a server whose directTools is "search" offers no
// direct tool until the agent finds one: a describe
// makes that tool a direct tool, the client is told, and the call works;
// tools not shown stay out. With freezeDirectTools nothing is added.
func TestDirectToolsOnDemand(t *testing.T) {
	for _, frozen := range []bool{false, true} {
		mcptest.CheckNoLeaks(t)
		f := fixture()
		f["directTools"] = "search"
		g := newGateway(t, map[string]def{"f": f}, map[string]any{"freezeDirectTools": frozen})
		changed := make(chan struct{}, 10)
		cs := g.connect(t, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		})
		if got := toolNames(t, cs); !slices.Equal(got, []string{"mcp"}) {
			t.Fatalf("frozen %v: tools at first %v, want only mcp", frozen, got)
		}
		if r := call(t, cs, "mcp", map[string]any{"describe": "echo", "server": "f"}); r.IsError {
			t.Fatalf("describe: %s", text(r))
		}
		got := toolNames(t, cs)
		if frozen {
			if !slices.Equal(got, []string{"mcp"}) {
				t.Errorf("frozen: tools %v after a describe, want only mcp", got)
			}
			continue
		}
		// syncDirect ran before the describe's answer: the tool is there.
		if !slices.Equal(got, []string{"f_echo", "mcp"}) {
			t.Fatalf("tools %v after describing echo, want f_echo and mcp", got)
		}
		select {
		case <-changed:
		case <-t.Context().Done():
			t.Fatal("the client was not told of the new direct tool")
		}
		if r := call(t, cs, "f_echo", map[string]any{"text": "found"}); r.IsError || text(r) != "found" {
			t.Errorf("f_echo: %q (error %v)", text(r), r.IsError)
		}
	}
}
