package mcptest

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
)

// ServeBasicApp starts the MCP Apps example server (see BasicApp) over
// Streamable HTTP on a free 127.0.0.1 port, waits until it accepts
// connections, and returns its endpoint URL (/mcp). It answers with CORS
// headers for any origin, as its own example host expects. The server is
// stopped when the test ends.
func (p PeerSet) ServeBasicApp(t testing.TB) (endpoint string) {
	t.Helper()
	port := serve(t, "server-basic-vanillajs", func(port int) Command {
		c := p.script("server-basic-vanillajs", "dist/index.js")
		// The server reads PORT (default 3001) and listens on 0.0.0.0; the
		// preload keeps it on 127.0.0.1.
		preload := filepath.Join(p.Dir, "loopback-listen.cjs")
		c.Env = append(c.Env,
			"PORT="+strconv.Itoa(port),
			"NODE_OPTIONS="+nodeOptions("--require", `"`+preload+`"`))
		return c
	})
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}
