package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// An upstream is the server every subject reaches: a stdio command and its
// echo tool.
type upstream struct {
	name    string
	path    string
	args    []string
	env     map[string]string
	tool    string
	argName string // the echo tool's text argument
}

// goUpstream is the fixture server of the project's tests (go-sdk, mode
// good), run by this very binary.
func goUpstream() upstream {
	path, args, env := testserver.Command(testserver.Good)
	return upstream{name: "go", path: path, args: args, env: env, tool: "echo", argName: "text"}
}

// nodeUpstream is @modelcontextprotocol/server-everything from the npm
// peers in $MCP_PEERS_DIR, if they are installed and node is on $PATH.
func nodeUpstream() (upstream, bool) {
	dir := os.Getenv("MCP_PEERS_DIR")
	node, err := exec.LookPath("node")
	if dir == "" || err != nil {
		return upstream{}, false
	}
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		return upstream{}, false
	}
	return upstream{name: "node", path: node, args: []string{script, "stdio"}, env: map[string]string{}, tool: "echo", argName: "message"}, true
}

func (u upstream) cmd() *exec.Cmd {
	cmd := exec.Command(u.path, u.args...)
	cmd.Env = os.Environ()
	for k, v := range u.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// A subject is one way to reach the upstream's echo tool.
type subject struct {
	name  string
	tool  string
	args  func(i int) any
	start func() (*running, error) // nil: the upstream itself over stdio
}

// A running subject: its process and, over HTTP, its endpoint.
type running struct {
	cmd    *exec.Cmd
	url    string
	exited chan struct{}
}

// stop ends a subject: SIGTERM (switchboard closes its servers), then
// SIGKILL after 10 seconds.
func (r *running) stop() {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.exited
	}
}

// startServing starts cmd and waits until a line of its stderr matches
// ready; url is the endpoint, or "" to take it from ready's first group.
func startServing(cmd *exec.Cmd, ready *regexp.Regexp, url string) (*running, error) {
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := &running{cmd: cmd, exited: make(chan struct{})}
	urlc := make(chan string, 1)
	var tail []string
	go func() {
		defer close(r.exited)
		defer cmd.Wait()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			tail = append(tail, sc.Text())
			if m := ready.FindStringSubmatch(sc.Text()); m != nil {
				if url == "" {
					url = m[1]
				}
				urlc <- url
				break
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case u := <-urlc:
		r.url = u
		return r, nil
	case <-r.exited:
		return nil, fmt.Errorf("%s exited before serving: %s", cmd.Path, strings.Join(tail, "\n"))
	case <-time.After(60 * time.Second):
		r.stop()
		return nil, fmt.Errorf("%s: not serving after 60s", cmd.Path)
	}
}

var sdkServing = regexp.MustCompile(`serving (http://\S+/mcp)`)

// sbUpstreamProtocol, if set, is the protocol revision switchboard speaks
// to the upstream (the server's protocolVersion), instead of its default.
var sbUpstreamProtocol string

// switchboardConfig writes a configuration with the upstream as server f0
// in a home directory of its own named label, and returns its path.
func switchboardConfig(dir, label string, u upstream, prefix string) (string, error) {
	home := filepath.Join(dir, "home-"+u.name+"-"+label)
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", err
	}
	f0 := map[string]any{"command": u.path, "args": u.args, "env": u.env}
	if label == "direct" { // proxy mode with the server's tools as direct tools
		f0["directTools"] = true
	}
	if sbUpstreamProtocol != "" {
		f0["protocolVersion"] = sbUpstreamProtocol
	}
	servers := map[string]any{"f0": f0}
	data, _ := json.Marshal(map[string]any{"mcpServers": servers, "settings": map[string]any{"toolPrefix": prefix}})
	path := filepath.Join(home, "config.json")
	return path, os.WriteFile(path, data, 0o600)
}

// switchboardCmd runs the switchboard binary with the configuration.
func switchboardCmd(bin, config string, args ...string) *exec.Cmd {
	home := filepath.Dir(config)
	cmd := exec.Command(bin, append(args, "--config", config)...)
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME=", "XDG_CACHE_HOME=", "XDG_STATE_HOME=", "XDG_DATA_HOME=", "SWITCHBOARD_CONFIG=")
	cmd.Dir = home
	return cmd
}

// startSwitchboard starts `switchboard serve --http` with toolPrefix prefix
// and env added to its environment.
func startSwitchboard(bin, dir, label string, u upstream, prefix string, env []string, extra ...string) func() (*running, error) {
	return func() (*running, error) {
		config, err := switchboardConfig(dir, label, u, prefix)
		if err != nil {
			return nil, err
		}
		cmd := switchboardCmd(bin, config, append([]string{"serve", "--http", "127.0.0.1:0"}, extra...)...)
		cmd.Env = append(cmd.Env, env...)
		return startServing(cmd, sdkServing, "")
	}
}

// startRelay starts this binary as the bare go-sdk relay over HTTP.
func startRelay(u upstream) func() (*running, error) {
	return func() (*running, error) {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), relayEnv+"=http", relayUpstreamEnv+"="+u.name)
		return startServing(cmd, sdkServing, "")
	}
}

var peerReady = regexp.MustCompile(`All clients initialized`)

// startPeer starts TBXark/mcp-proxy with the upstream as server f0, serving
// Streamable HTTP (stateless: its only mode) at /f0/.
func startPeer(bin, dir string, u upstream) func() (*running, error) {
	return func() (*running, error) {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		cfg := map[string]any{
			"mcpProxy": map[string]any{"baseURL": "http://" + addr, "addr": addr, "name": "mcp-proxy", "version": "1", "type": "streamable-http"},
			"mcpServers": map[string]any{"f0": map[string]any{
				"command": u.path, "args": u.args, "env": u.env,
				"options": map[string]any{"logEnabled": false},
			}},
		}
		data, _ := json.Marshal(cfg)
		path := filepath.Join(dir, "mcp-proxy-"+u.name+".json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
		return startServing(exec.Command(bin, "--config", path), peerReady, "http://"+addr+"/f0/")
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// client is shared by every HTTP client, with enough idle connections for
// many concurrent clients.
var client = &http.Client{Transport: &http.Transport{MaxIdleConns: 500, MaxIdleConnsPerHost: 500, IdleConnTimeout: time.Minute}}

// connect connects a go-sdk client at 2025-11-25 (what agents speak
// today): to r over HTTP, or to a new upstream child over stdio.
func connect(ctx context.Context, r *running, u upstream) (*mcp.ClientSession, error) {
	var t mcp.Transport
	if r != nil {
		t = &mcp.StreamableClientTransport{Endpoint: r.url, HTTPClient: client}
	} else {
		t = &mcp.CommandTransport{Command: u.cmd(), TerminateDuration: time.Second}
	}
	return mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

// call calls the subject's tool once and checks the answer.
func call(ctx context.Context, cs *mcp.ClientSession, s *subject, i int) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: s.tool, Arguments: s.args(i)})
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	if res.IsError {
		return fmt.Errorf("%s: error result: %s", s.name, resultText(res))
	}
	return nil
}

func resultText(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(t.Text)
		}
	}
	return sb.String()
}

// rssKB reads VmRSS or VmHWM of a process, in kB; 0 where there is no /proc.
func rssKB(pid int, field string) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	return 0
}

// descendantsKB sums the VmRSS of pid's descendants (a gateway's upstream
// server and, for switchboard, its supervisor), in kB; 0 where there is no
// /proc.
func descendantsKB(pid int) int {
	kb := 0
	for _, d := range descendants(pid) {
		kb += rssKB(d, "VmRSS")
	}
	return kb
}

// descendants returns pid's descendants, from /proc; none where there is
// no /proc.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces.
		rest := string(data[strings.LastIndexByte(string(data), ')')+1:])
		if f := strings.Fields(rest); len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil {
				children[ppid] = append(children[ppid], child)
			}
		}
	}
	var out []int
	for todo := children[pid]; len(todo) > 0; todo = todo[1:] {
		out = append(out, todo[0])
		todo = append(todo, children[todo[0]]...)
	}
	return out
}
