package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestInspector drives `switchboard serve` with the MCP inspector CLI
// of @modelcontextprotocol/inspector, a real client written with the
// TypeScript SDK, over stdio and over Streamable HTTP: it lists the tools
// and uses the mcp tool to search, describe and call a tool of the
// everything server.
//
// The inspector starts the switchboard in $PATH, which testscript.Main
// points at a copy of this test binary that runs main.
func TestInspector(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	peers := mcptest.Peers(t)
	home := everythingHome(t)
	// The inspector names itself from ../package.json, relative to where it
	// runs.
	dir := filepath.Join(t.TempDir(), "pkg")
	if err := os.MkdirAll(filepath.Join(dir, "cwd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"switchboard-test","version":"0.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := serveEnv(home)
	inspect := func(t *testing.T, target []string, args ...string) string {
		t.Helper()
		cmd := peers.Inspector(append(target, args...)...).Cmd(t)
		cmd.Dir = filepath.Join(dir, "cwd")
		cmd.Env = append(env, peers.Inspector().Env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("inspector %q: %v\n%s%s", args, err, out, stderr.Bytes())
		}
		return string(out)
	}

	t.Run("stdio", func(t *testing.T) {
		checkInspector(t, func(t *testing.T, args ...string) string {
			return inspect(t, []string{"switchboard", "serve"}, args...)
		})
	})
	t.Run("http", func(t *testing.T) {
		url := startServe(t, env, "--http", "127.0.0.1:0")
		checkInspector(t, func(t *testing.T, args ...string) string {
			return inspect(t, []string{url}, args...)
		})
	})
}

// checkInspector lists the gateway's tools and searches, describes and
// calls get-sum through the mcp tool, with inspect running the inspector
// against one gateway. A tool error still exits 0, so results are read.
func checkInspector(t *testing.T, inspect func(t *testing.T, args ...string) string) {
	var list struct {
		Tools []struct{ Name string }
	}
	out := inspect(t, "--method", "tools/list")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("tools/list: %v\n%s", err, out)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"mcp"}) {
		t.Errorf("tools/list = %v, want [mcp]", names)
	}
	checkStrict(t, inspect)
	tests := []struct {
		name string
		args []string // --tool-arg pairs; the inspector parses JSON values
		want string   // in the text of the result
	}{
		{"search", []string{"search=add two numbers"}, "everything_get-sum"},
		{"describe", []string{"describe=get-sum"}, `input schema: {`},
		{"call", []string{"tool=get-sum", `args={"a": 2, "b": 40}`}, "The sum of 2 and 40 is 42"},
		{"call with args as a string", []string{"tool=everything_get-sum", `args="{\"a\": 1, \"b\": 2}"`}, "is 3"},
		// A tool that runs only as a task: the gateway runs the task.
		{"call a task tool", []string{"tool=simulate-research-query", `args={"topic": "tides"}`}, "Research Report: tides"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := inspect(t, append([]string{"--method", "tools/call", "--tool-name", "mcp", "--tool-arg"}, tt.args...)...)
			var res struct {
				IsError bool
				Content []struct{ Text string }
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("tools/call: %v\n%s", err, out)
			}
			if res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, tt.want) {
				t.Errorf("mcp %q = %s, want a result containing %q", tt.args, out, tt.want)
			}
		})
	}
}

// checkStrict lists the tools with the inspector's --strict portability
// check: the mcp tool's schema has no finding (on main, search and args
// had type lists, two warnings).
func checkStrict(t *testing.T, inspect func(t *testing.T, args ...string) string) {
	t.Helper()
	out := inspect(t, "--method", "tools/list", "--strict", "--format", "json")
	var env struct {
		Result         struct{ Tools []struct{ Name string } }
		SchemaFindings []json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("tools/list --strict: %v\n%s", err, out)
	}
	if len(env.Result.Tools) == 0 || len(env.SchemaFindings) > 0 {
		t.Errorf("tools/list --strict: %d tools, findings %s, want tools and no findings", len(env.Result.Tools), env.SchemaFindings)
	}
}

// writeConfig writes the user configuration file under home.
func writeConfig(t *testing.T, home string, doc map[string]any) {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, ".config", "switchboard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// serveEnv is the environment of a switchboard whose home is home, with no
// XDG directories or explicit configuration from the real user.
func serveEnv(home string) []string {
	env := []string{"HOME=" + home, "GORACE=atexit_sleep_ms=0"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", k == "GORACE", k == "SWITCHBOARD_CONFIG", k == "SWITCHBOARD_TOKEN", strings.HasPrefix(k, "XDG_"):
			continue
		}
		env = append(env, kv)
	}
	return env
}

var servingLine = regexp.MustCompile(`serving (http://\S+/mcp)`)

// startServe starts `switchboard serve` with args, waits for the URL it
// prints, and returns it. When the test ends it sends SIGTERM and checks
// that the gateway exits 0 within 10 seconds.
func startServe(t *testing.T, env []string, args ...string) string {
	t.Helper()
	url, err := tryServe(t, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// tryServe is startServe that returns, rather than fails on, a serve that
// exits before it prints its URL (one whose port was taken meanwhile, see
// freeAddr) or does not print it within 30 seconds.
func tryServe(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("switchboard")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	urlc := make(chan string, 1)
	var mu sync.Mutex
	var seen strings.Builder // what it printed before the URL
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
				break
			}
			mu.Lock()
			seen.WriteString(sc.Text() + "\n")
			mu.Unlock()
		}
		io.Copy(io.Discard, stderr)
		waitErr = cmd.Wait()
	}()
	stop := func() error {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
			return waitErr
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
			return errors.New("serve did not stop within 10s of SIGTERM")
		}
	}
	printed := func() string {
		mu.Lock()
		defer mu.Unlock()
		return seen.String()
	}
	select {
	case url := <-urlc:
		t.Cleanup(func() {
			if err := stop(); err != nil {
				t.Errorf("serve after SIGTERM: %v, want exit 0", err)
			}
		})
		return url, nil
	case <-exited:
		return "", fmt.Errorf("serve exited before it printed its URL (%v); stderr:\n%s", waitErr, printed())
	case <-time.After(30 * time.Second):
		stop()
		return "", fmt.Errorf("serve printed no URL within 30s; stderr:\n%s", printed())
	}
}

// freeAddr returns a loopback address with a port nothing listened on a
// moment ago, for a serve whose address must be known before it starts.
// Another process may take the port in between (an outgoing connection's
// ephemeral port, on a busy machine): a caller retries on portTaken.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// portTaken reports whether serve's error output says its port was taken.
func portTaken(stderr string) bool {
	return strings.Contains(stderr, "address already in use")
}

// TestTryServeReportsATakenPort: a serve whose port is taken ends at once,
// and tryServe says so as soon as it ends, for the caller to retry on
// another port, rather than waiting for a URL that will never come.
func TestTryServeReportsATakenPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	home := t.TempDir()
	writeConfig(t, home, map[string]any{"mcpServers": map[string]any{}})
	_, err = tryServe(t, serveEnv(home), "--http", ln.Addr().String())
	if err == nil || !portTaken(err.Error()) || !strings.Contains(err.Error(), "exited before it printed its URL") {
		t.Fatalf("tryServe on a taken port: %v; want that serve exited, its port taken", err)
	}
}
