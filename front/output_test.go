package front

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestOutputSchemaHeld: a tool that declares an output schema and breaks
// it gets no success through serve, whichever door the call takes: the mcp
// tool, a direct tool, transparent mode; over the go-sdk path and the
// fast lane. The result says why, and what the server sent follows.
func TestOutputSchemaHeld(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	path, args, env := hostile.Command(hostile.Liar)
	liar := def{"command": path, "args": args, "env": env}
	for _, tc := range []struct {
		name     string
		settings map[string]any
		tool     func(name string) (string, map[string]any)
	}{
		{"mcp tool", nil, func(name string) (string, map[string]any) {
			return "mcp", map[string]any{"tool": name, "server": "liar"}
		}},
		{"direct tool", map[string]any{"directTools": true}, func(name string) (string, map[string]any) {
			return "liar_" + name, map[string]any{}
		}},
		{"transparent", map[string]any{"toolPrefix": "none"}, func(name string) (string, map[string]any) {
			return name, map[string]any{}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateway(t, map[string]def{"liar": liar}, tc.settings)
			sessions := map[string]func() *mcp.ClientSession{
				"go-sdk path": func() *mcp.ClientSession { return g.connect(t, nil) },
				"fast lane": func() *mcp.ClientSession {
					cs, _ := g.connectHTTP(t, HTTPOptions{}, nil)
					return cs
				},
			}
			for door, open := range sessions {
				cs := open()
				name, a := tc.tool("count")
				if r := call(t, cs, name, a); r.IsError || !strings.Contains(text(r), `"n":3`) {
					t.Errorf("%s: a result that keeps its schema: %q (isError %v)", door, text(r), r.IsError)
				}
				for tool, want := range map[string]string{
					"bad_count": `broke its own contract: its structured content does not match its output schema`,
					"no_count":  `broke its own contract: it declares an output schema but returned no structured content`,
				} {
					name, a := tc.tool(tool)
					r := call(t, cs, name, a)
					// The mcp tool's structured content is its own details;
					// what the server sent is never in it.
					structured, _ := json.Marshal(r.StructuredContent)
					if !r.IsError || !strings.Contains(text(r), want) || strings.Contains(string(structured), `"n":`) {
						t.Errorf("%s, %s: %q (isError %v, structured %s); want an error result with %q, without the server's structured content", door, tool, text(r), r.IsError, structured, want)
					}
				}
			}
		})
	}
}
