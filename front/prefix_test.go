package front

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestToolPrefixMCP: settings.toolPrefix "mcp" names direct tools and
// prompts mcp__server__tool, as Claude Code and pi-mcp-adapter do; a
// server's own toolPrefix overrides it; the mcp tool resolves a name
// written either way.
func TestToolPrefixMCP(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	fx, gx := fixture(), fixture()
	fx["directTools"] = []string{"echo"}
	gx["directTools"] = []string{"echo"}
	gx["toolPrefix"] = "server"
	g := newGateway(t, map[string]def{"fx": fx, "gx": gx}, map[string]any{"toolPrefix": "mcp"})
	cs := g.connect(t, nil)
	got := toolNames(t, cs)
	for _, want := range []string{"mcp", "mcp__fx__echo", "gx_echo"} {
		if !slices.Contains(got, want) {
			t.Errorf("tools %v: no %s", got, want)
		}
	}
	if r := call(t, cs, "mcp__fx__echo", map[string]any{"text": "hi"}); r.IsError || text(r) != "hi" {
		t.Errorf("mcp__fx__echo: %q (error %v)", text(r), r.IsError)
	}
	if r := call(t, cs, "mcp", map[string]any{"tool": "mcp__gx__echo", "args": map[string]any{"text": "by the mcp tool"}}); r.IsError || !strings.Contains(text(r), "by the mcp tool") {
		t.Errorf("the mcp tool calling mcp__gx__echo: %q (error %v)", text(r), r.IsError)
	}
	if names := promptNames(t, cs); !slices.Equal(names, []string{"gx_greet", "mcp__fx__greet"}) {
		t.Errorf("prompts %v, want gx_greet and mcp__fx__greet", names)
	}
}

// TestFreezeDirectTools: with settings.freezeDirectTools, a tool the
// server adds later is not offered as a direct tool and the client is not
// told of a change (its prompt cache stays valid), while the catalog, and
// so search, still learns of it.
func TestFreezeDirectTools(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	f := fixture()
	f["directTools"] = true
	g := newGateway(t, map[string]def{"f": f}, map[string]any{"freezeDirectTools": true})
	changed := make(chan struct{}, 10)
	cs := g.connect(t, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	before := toolNames(t, cs)
	if !slices.Contains(before, "f_add-tool") {
		t.Fatalf("tools %v: the first sync did not run", before)
	}
	// The engine handles one server's changes one after the other, each
	// told to every subscriber before the next: once the catalog has the
	// second tool, the gateway has handled the first.
	seen := make(chan struct{}, 1)
	cancel := g.srv.eng.Subscribe(func(ctx context.Context, ev gateway.Event) {
		if ent, ok := g.srv.eng.Cached(ctx, "f"); ok && slices.ContainsFunc(ent.Tools, func(t *mcp.Tool) bool { return t.Name == "zeta-two" }) {
			select {
			case seen <- struct{}{}:
			default:
			}
		}
	})
	defer cancel()
	call(t, cs, "f_add-tool", map[string]any{"text": "zeta-one"})
	call(t, cs, "f_add-tool", map[string]any{"text": "zeta-two"})
	select {
	case <-seen:
	case <-t.Context().Done():
		t.Fatal("the catalog never learnt of the new tools")
	}
	if got := toolNames(t, cs); !slices.Equal(got, before) {
		t.Errorf("frozen direct tools changed: %v, then %v", before, got)
	}
	select {
	case <-changed:
		t.Error("the client was told the tools changed")
	default:
	}
}
