package gateway

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// TestPrefixedNameStartsItsServer: on a cold catalog, a call by a prefixed
// name (a_echo) starts only the server the prefix names; a name that no
// server's prefix begins, or that the named server does not have, is
// looked for everywhere, as before.
func TestPrefixedNameStartsItsServer(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	servers := map[string]def{"a": fixture(testserver.Good), "b": fixture(testserver.Good), "c-d": fixture(testserver.Good)}
	started := func(e *Engine) []string {
		var out []string
		for _, st := range e.Status(t.Context()) {
			if st.State == proxy.StateConnected {
				out = append(out, st.Name)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name, req string
		want      []string
	}{
		{"prefixed", `{"tool": "a_echo", "args": {"text": "hi"}}`, []string{"a"}},
		{"prefixed, a server name with a dash", `{"tool": "c_d_echo", "args": {"text": "hi"}}`, []string{"c-d"}},
		{"not on the named server", `{"tool": "a_nosuch"}`, []string{"a", "b", "c-d"}},
		{"unprefixed", `{"tool": "echo", "args": {"text": "hi"}}`, []string{"a", "b", "c-d"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := engineIn(t, t.TempDir(), servers, nil, nil)
			handle(t, e, tc.req)
			got := started(e)
			if len(got) != len(tc.want) {
				t.Fatalf("%s started %v, want %v", tc.req, got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("%s started %v, want %v", tc.req, got, tc.want)
				}
			}
		})
	}
}
