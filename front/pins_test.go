package front

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// shifty defines a server whose tools are what a file lists when it
// starts (testserver.Shifty), and writes that file.
func shifty(t *testing.T, tools ...*mcp.Tool) (def, func(...*mcp.Tool)) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "tools.json")
	set := func(tools ...*mcp.Tool) {
		data, _ := json.Marshal(testserver.ShiftyTools{Calls: filepath.Join(dir, "calls"), Tools: tools})
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	set(tools...)
	path, args, env := testserver.Command(testserver.Shifty)
	env[testserver.ShiftyEnv] = file
	return def{"command": path, "args": args, "env": env}, set
}

// listed returns the tools a client is shown.
func listed(t *testing.T, cs *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// TestDirectToolsShowApproved: after a rug pull (a changed description, or
// _meta or icons changed alone), serve's direct tools and transparent
// mode list the approved definition, never the new one; a tool new under
// pin "strict" is not listed at all. The mcp tool's listing shows the
// approved text too, and the changed tool cannot be called.
func TestDirectToolsShowApproved(t *testing.T) {
	for _, mode := range []struct {
		name     string
		settings map[string]any
		direct   bool
		exposed  string
	}{
		{"direct", map[string]any{"pin": "strict"}, true, "s_" + hostile.NoteTool},
		{"transparent", map[string]any{"pin": "strict", "toolPrefix": "none"}, false, hostile.NoteTool},
	} {
		for name, pulled := range map[string]*mcp.Tool{"description": hostile.NotePulled(), "_meta": hostile.NoteMeta(), "icons": hostile.NoteIcons()} {
			t.Run(mode.name+"/"+name, func(t *testing.T) {
				mcptest.CheckNoLeaks(t)
				home := t.TempDir()
				s, set := shifty(t, hostile.Note())
				if mode.direct {
					s["directTools"] = true
				}
				servers := map[string]def{"s": s}
				g1 := newGatewayIn(t, home, servers, mode.settings, Options{})
				if tools := listed(t, g1.connect(t, nil)); !slices.ContainsFunc(tools, func(tl *mcp.Tool) bool { return tl.Name == mode.exposed }) {
					t.Fatalf("before the rug pull: tools %v lack %s", tools, mode.exposed)
				}
				g1.srv.Close()

				extra := hostile.NotePulled()
				extra.Name = "extra"
				set(pulled, extra)
				g2 := newGatewayIn(t, home, servers, mode.settings, Options{})
				cs := g2.connect(t, nil)
				tools := listed(t, cs)
				data, _ := json.Marshal(tools)
				if strings.Contains(string(data), hostile.InjectedWord) {
					t.Errorf("tools/list shows the rug pull's text:\n%s", data)
				}
				i := slices.IndexFunc(tools, func(tl *mcp.Tool) bool { return tl.Name == mode.exposed })
				if i < 0 || tools[i].Description != "Saves a note." || tools[i].Meta != nil || tools[i].Icons != nil {
					t.Errorf("tools/list has %s as %+v, want the approved definition", mode.exposed, tools)
				}
				if slices.ContainsFunc(tools, func(tl *mcp.Tool) bool { return strings.HasSuffix(tl.Name, "extra") }) {
					t.Errorf("tools/list has a tool new under pin strict: %s", data)
				}
				r := call(t, cs, mode.exposed, map[string]any{"note": "x"})
				if !r.IsError || !strings.Contains(text(r), "quarantined") {
					t.Errorf("calling %s after the rug pull = %q, want refused as quarantined", mode.exposed, text(r))
				}
				if mode.direct {
					r := call(t, cs, "mcp", map[string]any{"server": "s"})
					if strings.Contains(text(r), hostile.InjectedWord) || !strings.Contains(text(r), "Saves a note.") {
						t.Errorf("the mcp tool's listing:\n%s", text(r))
					}
				}
			})
		}
	}
}
