package mcptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A PeerSet is an installed copy of the npm MCP peers pinned in
// testdata/mcp-peers/package-lock.json.
type PeerSet struct {
	Dir  string // the directory holding package.json and node_modules
	Node string // absolute path of the node executable
}

// Peers locates the installed npm peers: $MCP_PEERS_DIR if set, otherwise
// testdata/mcp-peers at the module root. If they are not installed, or node is
// not on $PATH, it skips the test, or fails it when SWITCHBOARD_REQUIRE_PEERS=1
// (as scripts/test.sh sets, so that CI cannot pass by skipping).
func Peers(t testing.TB) PeerSet {
	t.Helper()
	p, err := findPeers()
	if err != nil {
		if os.Getenv("SWITCHBOARD_REQUIRE_PEERS") == "1" {
			t.Fatalf("%v (SWITCHBOARD_REQUIRE_PEERS=1)", err)
		}
		t.Skipf("%v\nhint: run scripts/test.sh, which installs the MCP peers", err)
	}
	return p
}

func findPeers() (PeerSet, error) {
	dir := os.Getenv("MCP_PEERS_DIR")
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			return PeerSet{}, fmt.Errorf("locating MCP peers: %w", err)
		}
		dir = filepath.Join(root, "testdata", "mcp-peers")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return PeerSet{}, fmt.Errorf("locating MCP peers: %w", err)
	}
	// npm writes node_modules/.package-lock.json at the end of a successful install.
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil {
		return PeerSet{}, fmt.Errorf("locating MCP peers: not installed in %s", dir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return PeerSet{}, fmt.Errorf("locating MCP peers: %w", err)
	}
	if node, err = filepath.Abs(node); err != nil {
		return PeerSet{}, fmt.Errorf("locating MCP peers: %w", err)
	}
	return PeerSet{Dir: dir, Node: node}, nil
}

// script returns a node Command running the entry file of an installed package.
func (p PeerSet) script(pkg, entry string, args ...string) Command {
	script := filepath.Join(p.Dir, "node_modules", "@modelcontextprotocol", pkg, entry)
	return Command{
		Path: p.Node,
		Args: append([]string{script}, args...),
		Env:  []string{ownerMark()},
	}
}

// Everything returns the command for @modelcontextprotocol/server-everything
// over stdio. It offers every MCP feature; its tools include echo and get-sum,
// and tools that need client capabilities (sampling, elicitation, roots) are
// added after initialization. It answers server/discover with "method not
// found", so go-sdk clients fall back to initialize at 2025-11-25. If the
// client has the roots capability (go-sdk's default), the server asks for
// roots 350ms after initialization and does not exit on stdin EOF while that
// request is unanswered: give mcp.CommandTransport a short TerminateDuration.
func (p PeerSet) Everything() Command {
	return p.script("server-everything", "dist/index.js", "stdio")
}

// Filesystem returns the command for @modelcontextprotocol/server-filesystem
// over stdio, allowed to access the given root directories.
func (p PeerSet) Filesystem(roots ...string) Command {
	return p.script("server-filesystem", "dist/index.js", roots...)
}

// Memory returns the command for @modelcontextprotocol/server-memory over
// stdio, keeping its knowledge graph in file, an absolute path (by default it
// would write into node_modules).
func (p PeerSet) Memory(file string) Command {
	c := p.script("server-memory", "dist/index.js")
	c.Env = append(c.Env, "MEMORY_FILE_PATH="+file)
	return c
}

// An HTTPMode is an HTTP transport of server-everything.
type HTTPMode string

const (
	StreamableHTTP HTTPMode = "streamableHttp" // endpoint /mcp
	SSE            HTTPMode = "sse"            // the 2024-11-05 HTTP+SSE transport; endpoint /sse
)

// ServeEverything starts server-everything in the given HTTP mode on a free
// 127.0.0.1 port, waits until it accepts connections, and returns its
// endpoint URL. The server is stopped when the test ends.
func (p PeerSet) ServeEverything(t testing.TB, mode HTTPMode) (endpoint string) {
	t.Helper()
	path := map[HTTPMode]string{StreamableHTTP: "/mcp", SSE: "/sse"}[mode]
	if path == "" {
		t.Fatalf("serving server-everything: unknown HTTP mode %q", mode)
	}
	port := serve(t, "server-everything "+string(mode), func(port int) Command {
		c := p.script("server-everything", "dist/index.js", string(mode))
		// The server reads PORT (default 3001) and listens on all interfaces;
		// the preload keeps it on 127.0.0.1.
		preload := filepath.Join(p.Dir, "loopback-listen.cjs")
		c.Env = append(c.Env,
			"PORT="+strconv.Itoa(port),
			"NODE_OPTIONS="+nodeOptions("--require", `"`+preload+`"`))
		return c
	})
	return fmt.Sprintf("http://127.0.0.1:%d%s", port, path)
}

// nodeOptions returns $NODE_OPTIONS followed by opts.
func nodeOptions(opts ...string) string {
	return strings.TrimSpace(os.Getenv("NODE_OPTIONS") + " " + strings.Join(opts, " "))
}
