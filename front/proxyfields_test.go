package front

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestProxyToolTakesWhatParseTakes: every field and alias the engine's
// Parse accepts passes the mcp tool's schema through serve, on go-sdk's
// door and on the fast lane, and an unknown field gets Parse's own error
// (the fields and an example), not a bare schema error. On main,
// includeDisabled and include_disabled were refused by go-sdk's validation
// against "additionalProperties": false.
func TestProxyToolTakesWhatParseTakes(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"fx": fixture()}, nil)
	lane, _ := g.connectHTTP(t, HTTPOptions{}, nil)
	for _, c := range []struct {
		name string
		cs   *mcp.ClientSession
	}{{"go-sdk", g.connect(t, nil)}, {"lane", lane}} {
		for _, args := range []map[string]any{
			{"search": "echo", "includeDisabled": true},
			{"search": "echo", "include_disabled": true},
			{"search": "echo", "includeSchemas": true},
			{"describe": "echo", "includeSchemas": true},
			{"action": "reconnect", "server": "fx"},
			{"connect": "fx"},
		} {
			if r := call(t, c.cs, "mcp", args); r.IsError {
				t.Errorf("%s, %v: %s", c.name, args, text(r))
			}
		}
		r := call(t, c.cs, "mcp", map[string]any{"search": "echo", "bogus": 1})
		if !r.IsError || !strings.Contains(text(r), `unknown field "bogus"`) || !strings.Contains(text(r), "example:") {
			t.Errorf("%s, an unknown field: %s", c.name, text(r))
		}
	}
}
