package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// followMain is the "follow" command of the tests: a browser that approves
// at once. $BROWSER=follow makes switchboard open authorization URLs with
// it.
func followMain() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: follow URL")
		os.Exit(2)
	}
	code, err := oauthtest.Follow(context.Background(), os.Args[1])
	if err != nil || code != http.StatusOK {
		fmt.Fprintf(os.Stderr, "follow: HTTP %d, %v\n", code, err)
		os.Exit(1)
	}
}

// fileStore keeps the tests' tokens in files under their home, where the
// canary check looks, whatever keychain the machine has.
var fileStore = map[string]any{"credentialStore": "file"}

// switchboardRun runs the real switchboard with stdin and returns what it
// printed and its exit code.
func switchboardRun(t *testing.T, env []string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("switchboard", args...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// recorder is an MCP server without OAuth that records the Authorization
// headers it receives.
func recorder(t *testing.T) (*httptest.Server, func() []string) {
	s := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "hello"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var mu sync.Mutex
	var seen []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// serveSession starts switchboard serve over stdio and connects to it.
func serveSession(t *testing.T, env []string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command("switchboard", "serve")
	cmd.Env = env
	cmd.Dir = t.TempDir()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// callMCP calls the mcp tool of a serve over stdio and returns its text
// and whether it is an error.
func callMCP(t *testing.T, env []string, args map[string]any) (string, bool) {
	t.Helper()
	cs := serveSession(t, env)
	defer cs.Close()
	return callTool(t, cs, args)
}

func callTool(t *testing.T, cs *mcp.ClientSession, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return text.String(), res.IsError
}

// TestAuthEndToEnd: a remote server that needs OAuth goes from needs-auth
// to a successful call with one switchboard auth login, through the CLI and
// through serve; an expired token is refreshed unseen; and the token
// appears nowhere but in the store and in the Authorization header sent to
// its own server.
func TestAuthEndToEnd(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{Scopes: []string{"read", "offline_access"}})
	plain, plainSeen := recorder(t)
	home := t.TempDir()
	fixture, fargs, fenv := testserver.Command(testserver.Good)
	writeConfig(t, home, map[string]any{"mcpServers": map[string]any{
		"api":   map[string]any{"url": as.URL()},
		"plain": map[string]any{"url": plain.URL},
		"local": map[string]any{"command": fixture, "args": fargs, "env": fenv},
	}, "settings": fileStore})
	env := serveEnv(home)
	var printed strings.Builder // everything switchboard printed
	run := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		out, errOut, code := switchboardRun(t, env, stdin, args...)
		printed.WriteString(out + errOut)
		return out, errOut, code
	}
	echo := map[string]any{"tool": "echo", "server": "api", "args": map[string]any{"text": "hi"}}

	// Not logged in: the CLI and serve say needs-auth and name the command.
	_, errOut, code := run("", "call", "echo", "--server", "api", "text=hi")
	if code != 1 || !strings.Contains(errOut, `needs-auth: the server requires an OAuth login; hint: switchboard auth login api`) {
		t.Fatalf("call before login: exit %d, stderr:\n%s", code, errOut)
	}
	text, isErr := callMCP(t, env, echo)
	printed.WriteString(text)
	if !isErr || !strings.Contains(text, "needs-auth") || !strings.Contains(text, "switchboard auth login api") {
		t.Fatalf("mcp tool before login: %v %s", isErr, text)
	}
	out, _, _ := run("", "auth", "status")
	if !strings.Contains(out, "api") || !strings.Contains(out, "not logged in") {
		t.Errorf("auth status before login:\n%s", out)
	}

	// One login.
	login := append(env, "BROWSER=follow")
	_, errOut, code = switchboardRun(t, login, "", "auth", "login", "api")
	printed.WriteString(errOut)
	if code != 0 || !strings.Contains(errOut, "logged in to api (scopes read offline_access; expires in ") {
		t.Fatalf("auth login: exit %d:\n%s", code, errOut)
	}
	out, errOut, code = run("", "call", "echo", "--server", "api", "text=hi", "--no-login")
	if code != 0 || strings.TrimSpace(out) != "hi" {
		t.Fatalf("call after login: exit %d: %s %s", code, out, errOut)
	}
	if text, isErr := callMCP(t, env, echo); isErr || text != "hi" {
		t.Fatalf("mcp tool after login: %v %s", isErr, text)
	}

	// A token the server no longer takes is refreshed without the user
	// seeing it.
	as.ExpireAccessTokens()
	out, errOut, code = run("", "call", "echo", "--server", "api", "text=again", "--no-login")
	if code != 0 || strings.TrimSpace(out) != "again" || withoutUnencryptedWarning(errOut) != "" || as.Counts().Refreshes != 1 {
		t.Fatalf("after expiry: exit %d, stdout %q, stderr %q, counts %+v", code, out, errOut, as.Counts())
	}

	// Everything else that could hold the token: a serve over HTTP that
	// logs everything (to a file under home), its metrics, another server.
	url := startServe(t, env, "--http", "127.0.0.1:0", "--log-level", "debug", "--log-file", filepath.Join(home, "serve.log"))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []map[string]any{echo, {"tool": "hello", "server": "plain"}, {}} {
		if text, isErr := callTool(t, cs, args); isErr {
			t.Fatal(text)
		}
	}
	cs.Close()
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	printed.Write(metrics)
	checkChildEnv(t, env)
	for _, args := range [][]string{{"status", "--json"}, {"auth", "status", "--json"}, {"tools", "api", "--json"}, {"index"}, {"config", "show"}} {
		run("", args...)
	}
	out, _, _ = run("", "auth", "status", "--json")
	var st authStatusJSON
	if err := json.Unmarshal([]byte(out), &st); err != nil || len(st.Servers) != 2 || !st.Servers[0].LoggedIn || st.Servers[0].Store != "file" {
		t.Errorf("auth status --json: %v\n%s", err, out)
	}
	checkCanary(t, home, printed.String(), plainSeen())

	// Logout revokes and removes.
	_, errOut, code = run("", "auth", "logout", "api")
	if code != 0 || !strings.Contains(errOut, "logged out of api") || as.Counts().Revocations == 0 {
		t.Fatalf("logout: exit %d %s, counts %+v", code, errOut, as.Counts())
	}
	_, errOut, code = run("", "call", "echo", "--server", "api", "text=hi", "--no-login")
	if code != 1 || !strings.Contains(errOut, "switchboard auth login api") {
		t.Errorf("after logout: exit %d %s", code, errOut)
	}
}

// checkCanary looks for the tokens the authorization server issued
// everywhere but the store: in what switchboard printed, in every file
// under home but the credentials, in the headers sent to another server,
// and in the environment of a stdio child (pid from the pid tool).
func checkCanary(t *testing.T, home, printed string, otherHeaders []string) {
	t.Helper()
	if strings.Contains(printed, oauthtest.CanaryPrefix) {
		t.Errorf("switchboard printed a token:\n%s", printed)
	}
	for _, h := range otherHeaders {
		if strings.Contains(h, oauthtest.CanaryPrefix) {
			t.Errorf("another server received the token: %q", h)
		}
	}
	inStore := false
	filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(path)
		has := bytes.Contains(data, []byte(oauthtest.CanaryPrefix))
		if strings.Contains(path, string(filepath.Separator)+"credentials"+string(filepath.Separator)) {
			inStore = inStore || has
			if info, _ := d.Info(); info.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, want 0600", path, info.Mode().Perm())
			}
			return nil
		}
		if has {
			t.Errorf("%s holds a token", path)
		}
		return nil
	})
	if !inStore {
		t.Errorf("no token in the store: the canary check looked for the wrong thing")
	}
}

// checkChildEnv reads the environment of the stdio server "local", started
// by serve, while it runs.
func checkChildEnv(t *testing.T, env []string) {
	t.Helper()
	cs := serveSession(t, env)
	defer cs.Close()
	text, isErr := callTool(t, cs, map[string]any{"tool": "pid", "server": "local"})
	pid, err := strconv.Atoi(strings.TrimSpace(text))
	if isErr || err != nil {
		t.Fatalf("pid tool: %q", text)
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Skipf("cannot read the child's environment: %v", err)
	}
	if bytes.Contains(environ, []byte(oauthtest.CanaryPrefix)) {
		t.Errorf("the stdio child's environment holds a token")
	}
}

// TestAuthLoginNoBrowser: with --no-browser, login prints the URL and takes
// the redirect URL pasted on standard input.
func TestAuthLoginNoBrowser(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{})
	home := t.TempDir()
	writeConfig(t, home, map[string]any{"mcpServers": map[string]any{"api": map[string]any{"url": as.URL()}}, "settings": fileStore})
	cmd := exec.Command("switchboard", "auth", "login", "api", "--no-browser")
	cmd.Env = serveEnv(home)
	stdin, _ := cmd.StdinPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var authURL string
	for sc.Scan() {
		if u := strings.TrimSpace(sc.Text()); strings.HasPrefix(u, as.AS.URL+"/authorize?") {
			authURL = u
			break
		}
	}
	if authURL == "" {
		t.Fatal("login printed no authorization URL")
	}
	// The browser is elsewhere: the redirect does not reach the listener;
	// the user copies it from the address bar.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	fmt.Fprintln(stdin, resp.Header.Get("Location"))
	rest, _ := io.ReadAll(stderr)
	if err := cmd.Wait(); err != nil || !strings.Contains(string(rest), "logged in to api") {
		t.Fatalf("login: %v\n%s", err, rest)
	}
}

// TestAuthAutoLogin: a command that meets a server needing a login logs in
// by itself when it can open a browser, and goes on.
func TestAuthAutoLogin(t *testing.T) {
	as := oauthtest.New(t, oauthtest.Options{})
	home := t.TempDir()
	writeConfig(t, home, map[string]any{"mcpServers": map[string]any{"api": map[string]any{"url": as.URL()}}, "settings": fileStore})
	env := append(serveEnv(home), "BROWSER=follow")
	out, errOut, code := switchboardRun(t, env, "", "call", "echo", "--server", "api", "text=hi")
	if code != 0 || strings.TrimSpace(out) != "hi" || !strings.Contains(errOut, "switchboard: api needs a login; opening the browser") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	// --no-login: a fresh store, and the command to run instead.
	home2 := t.TempDir()
	writeConfig(t, home2, map[string]any{"mcpServers": map[string]any{"api": map[string]any{"url": as.URL()}}, "settings": fileStore})
	_, errOut, code = switchboardRun(t, append(serveEnv(home2), "BROWSER=follow"), "", "call", "echo", "--server", "api", "text=hi", "--no-login")
	if code != 1 || !strings.Contains(errOut, "hint: switchboard auth login api") || strings.Contains(errOut, "opening the browser") {
		t.Errorf("--no-login: exit %d:\n%s", code, errOut)
	}
}
