package main

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// These tests run the real switchboard binary: the copy of the test binary
// that testscript put on $PATH as "switchboard".

// serveHome writes a configuration with servers (and settings, if not nil)
// into a new home directory and returns it.
func serveHome(t *testing.T, servers map[string]any, settings map[string]any) string {
	t.Helper()
	home := t.TempDir()
	doc := map[string]any{"mcpServers": servers}
	if settings != nil {
		doc["settings"] = settings
	}
	writeConfig(t, home, doc)
	return home
}

// fixtureServer is the definition of the fixture server in mode. Its
// environment carries the leak checker's mark, which switchboard would not
// pass on.
func fixtureServer(mode string) map[string]any {
	path, args, env := testserver.Command(mode)
	env[mcptest.OwnerEnv] = os.Getenv(mcptest.OwnerEnv)
	return map[string]any{"command": path, "args": args, "env": env}
}

// switchboardCmd returns the real binary run with args in home, its
// temporary files in a directory of the test's.
func switchboardCmd(t *testing.T, home string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := exec.LookPath("switchboard")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), "HOME="+home, "TMPDIR="+t.TempDir(), "GORACE=atexit_sleep_ms=0",
		"XDG_CONFIG_HOME=", "XDG_STATE_HOME=", "XDG_CACHE_HOME=", "SWITCHBOARD_CONFIG=")
	return cmd
}

// serveStdio starts switchboard serve over stdio and connects client to it
// at 2025-11-25 (roots are a session feature before 2026-07-28).
func serveStdio(t *testing.T, home string, client *mcp.Client) (*exec.Cmd, *mcp.ClientSession) {
	t.Helper()
	cmd := switchboardCmd(t, home, "serve")
	cmd.Stderr = testLog{t}
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cmd, cs
}

// testLog sends what is written to it to t.Log.
type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// callText calls a tool and returns its text; a tool error fails the test
// unless wantErr.
func callText(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// TestServeSIGKILLEndsServers kills switchboard serve with SIGKILL, as the
// OOM killer would, and checks that its stdio server and the process that
// server started both end: the supervisor between them and switchboard
// gets the kernel's parent-death signal and ends the server's group.
func TestServeSIGKILLEndsServers(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	home := serveHome(t, map[string]any{"f": fixtureServer(testserver.Good)}, map[string]any{"toolPrefix": "none"})
	cmd, cs := serveStdio(t, home, mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil))
	var pids []int
	for _, tool := range []string{"pid", "spawn"} {
		out, isErr := callText(t, cs, tool, nil)
		pid, err := strconv.Atoi(out)
		if isErr || err != nil || !mcptest.Alive(pid) {
			t.Fatalf("%s = %q: want the pid of a running process", tool, out)
		}
		pids = append(pids, pid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	mcptest.WaitGone(t, "after switchboard was killed, its server and the server's child", pids[0], pids[1])
}

// fileURI is the file: URI of a directory.
func fileURI(dir string) string { return (&url.URL{Scheme: "file", Path: dir}).String() }

// TestServeStdioForwardsRoots connects a client with roots to switchboard
// serve over stdio and checks that the servers that accept them (roots:
// ["client"]) get them: the fixture lists them, and the real filesystem
// server, started without a directory, works in the client's root and
// nowhere else, and follows the client when its roots change.
func TestServeStdioForwardsRoots(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	p := mcptest.Peers(t)
	fs := p.Filesystem()
	work := t.TempDir()
	a, b := filepath.Join(work, "a"), filepath.Join(work, "b")
	for _, d := range []string{a, b} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "note.txt"), []byte("in "+filepath.Base(d)), 0o644)
	}
	f := fixtureServer(testserver.Roots)
	f["roots"] = []string{"client"}
	home := serveHome(t, map[string]any{
		"f":  f,
		"fs": map[string]any{"command": fs.Path, "args": fs.Args, "env": commandEnv(fs), "roots": []string{"client"}},
	}, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	client.AddRoots(&mcp.Root{URI: fileURI(a), Name: "a"})
	_, cs := serveStdio(t, home, client)

	mcpCall := func(server, tool string, args map[string]any) (string, bool) {
		req := map[string]any{"server": server, "tool": tool}
		if args != nil {
			req["args"] = args
		}
		return callText(t, cs, "mcp", req)
	}
	if got, _ := mcpCall("f", "roots", nil); got != fileURI(a) {
		t.Errorf("the fixture's roots = %q, want %q", got, fileURI(a))
	}
	if got, _ := mcpCall("fs", "list_allowed_directories", nil); !strings.Contains(got, a) {
		t.Errorf("the filesystem server allows %q, want %s", got, a)
	}
	if got, isErr := mcpCall("fs", "read_text_file", map[string]any{"path": filepath.Join(a, "note.txt")}); isErr || !strings.Contains(got, "in a") {
		t.Errorf("reading in the root: %q", got)
	}
	if got, isErr := mcpCall("fs", "read_text_file", map[string]any{"path": filepath.Join(b, "note.txt")}); !isErr || !strings.Contains(got, "Access denied") {
		t.Errorf("reading outside the root: %q, want access denied", got)
	}

	// The client's roots change: it sends roots/list_changed, and so does
	// switchboard to its servers, which list them again. The filesystem
	// server applies them after its own file system checks, with nothing to
	// wait on but its answers.
	client.RemoveRoots(fileURI(a))
	client.AddRoots(&mcp.Root{URI: fileURI(b), Name: "b"})
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _ := mcpCall("fs", "list_allowed_directories", nil)
		if strings.Contains(got, b) && !strings.Contains(got, a) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("20s after the client's roots changed, the filesystem server allows %q, want %s only", got, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got, isErr := mcpCall("fs", "read_text_file", map[string]any{"path": filepath.Join(a, "note.txt")}); !isErr || !strings.Contains(got, "Access denied") {
		t.Errorf("reading in the old root: %q, want access denied", got)
	}
	if got, _ := mcpCall("f", "roots", nil); got != fileURI(b) {
		t.Errorf("the fixture's roots = %q, want %q", got, fileURI(b))
	}
}

// commandEnv is a peer command's environment as a server's env.
func commandEnv(c mcptest.Command) map[string]string {
	env := map[string]string{}
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}

// TestServeStdioKeepsRootsToConfig connects a client whose root is the
// whole file system to switchboard serve over stdio, and checks that the
// servers whose configuration does not accept the client's roots never see
// them: the fixture is not even told there are roots, and the real
// filesystem server, given one directory on its command line, keeps to it
// (it would replace it with the client's "/"). A server with configured
// directories works in them, not in the client's.
func TestServeStdioKeepsRootsToConfig(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	work := t.TempDir()
	d, r := filepath.Join(work, "d"), filepath.Join(work, "r")
	for _, dir := range []string{d, r} {
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "note.txt"), []byte("in "+filepath.Base(dir)), 0o644)
	}
	secret := filepath.Join(work, "secret.txt")
	os.WriteFile(secret, []byte("PRIVATE"), 0o600)
	p := mcptest.Peers(t)
	fs := p.Filesystem(d)
	home := serveHome(t, map[string]any{
		"f":       fixtureServer(testserver.Roots),
		"fs":      map[string]any{"command": fs.Path, "args": fs.Args, "env": commandEnv(fs)},
		"fsroots": map[string]any{"command": fs.Path, "args": fs.Args, "env": commandEnv(fs), "roots": []string{r}},
	}, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	client.AddRoots(&mcp.Root{URI: "file:///", Name: "everything"})
	_, cs := serveStdio(t, home, client)
	mcpCall := func(server, tool string, args map[string]any) (string, bool) {
		req := map[string]any{"server": server, "tool": tool}
		if args != nil {
			req["args"] = args
		}
		return callText(t, cs, "mcp", req)
	}
	if got, _ := mcpCall("f", "roots", nil); got != "no roots capability" {
		t.Errorf("the fixture's roots = %q, want no roots capability", got)
	}
	for server, allowed := range map[string]string{"fs": d, "fsroots": r} {
		got, _ := mcpCall(server, "list_allowed_directories", nil)
		if list, _, _ := strings.Cut(got, "\nstructured content:"); list != "Allowed directories:\n"+allowed {
			t.Errorf("%s allows %q, want %s alone", server, got, allowed)
		}
		if got, isErr := mcpCall(server, "read_text_file", map[string]any{"path": filepath.Join(allowed, "note.txt")}); isErr || !strings.Contains(got, "in "+filepath.Base(allowed)) {
			t.Errorf("%s reading in its directory: %q", server, got)
		}
		if got, isErr := mcpCall(server, "read_text_file", map[string]any{"path": secret}); !isErr || strings.Contains(got, "PRIVATE") {
			t.Errorf("%s reading outside its directory: %q, want access denied", server, got)
		}
	}
}

// TestServeHTTPSharesNoRoots connects a client with roots to switchboard
// serve over HTTP and checks that a server is offered none, even one that
// accepts the client's roots: its connection is shared by every client.
func TestServeHTTPSharesNoRoots(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	f := fixtureServer(testserver.Roots)
	f["roots"] = []string{"client"}
	home := serveHome(t, map[string]any{"f": f}, nil)
	endpoint := startHTTP(t, switchboardCmd(t, home, "serve", "--http", "127.0.0.1:0"))
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	client.AddRoots(&mcp.Root{URI: fileURI(home), Name: "home"})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	got, isErr := callText(t, cs, "mcp", map[string]any{"server": "f", "tool": "roots"})
	if isErr || got != "no roots" {
		t.Errorf("over HTTP the fixture's roots = %q (isError %v), want none", got, isErr)
	}
}
