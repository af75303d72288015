package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestMovedSecretsServeAnEmptyEnvironment is the acceptance test of the
// credential store: a Claude Desktop file with a literal GitHub token (and
// a remote server with a literal Bearer token) imports whole with
// --move-secrets, and a switchboard serve started with an empty
// environment, as a GUI host starts it, gives the stdio server its token
// and sends the remote server its header. The canaries appear in no
// output, log, status, error, catalog, spill or configuration file: only in
// the store, the child's environment and the header to its own server.
func TestMovedSecretsServeAnEmptyEnvironment(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	const canary = "ghp_AcceptanceCanary0123456789abcdefABCD"
	const bearer = "api-bearer-canary-55e1"
	echo := echoServer()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+bearer {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		echo.ServeHTTP(w, r)
	}))
	t.Cleanup(api.Close)

	home := t.TempDir()
	tmp := t.TempDir()
	path, args, env := testserver.Command(testserver.EnvReport)
	path = copyFile(t, path, filepath.Join(t.TempDir(), "github-mcp-server")) // import skips the running binary
	env["GITHUB_PERSONAL_ACCESS_TOKEN"] = canary
	env[mcptest.OwnerEnv] = os.Getenv(mcptest.OwnerEnv)
	hostFile := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	writeJSONFile(t, hostFile, map[string]any{"mcpServers": map[string]any{
		"github": map[string]any{"command": path, "args": args, "env": env},
		"api":    map[string]any{"url": api.URL, "headers": map[string]any{"Authorization": "Bearer " + bearer}},
	}})
	writeJSONFile(t, filepath.Join(home, ".config", "switchboard", "config.json"), map[string]any{"settings": map[string]any{"credentialStore": "file"}})

	noCanary := func(what string, b []byte) {
		t.Helper()
		if bytes.Contains(b, []byte(canary)) || bytes.Contains(b, []byte(bearer)) {
			t.Errorf("%s holds a canary:\n%s", what, b)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := switchboardCmd(t, home, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("switchboard %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		noCanary("the output of switchboard "+strings.Join(args, " "), append(stdout.Bytes(), stderr.Bytes()...))
		return stdout.String() + stderr.String()
	}
	if out := run("import", "--from", "claude-desktop", "--write", "--move-secrets"); !strings.Contains(out, "wrote 2 servers (api, github)") {
		t.Fatalf("import wrote something else:\n%s", out)
	}

	// serve with an empty environment: HOME, where everything lives, and a
	// temporary directory of the test's own.
	exe, err := exec.LookPath("switchboard")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "serve")
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "TMPDIR=" + tmp, "GORACE=atexit_sleep_ms=0"}
	var log bytes.Buffer
	cmd.Stderr = &log
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "gui-host", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, log.Bytes())
	}
	got, isErr := callText(t, cs, "mcp", map[string]any{"server": "github", "tool": "env", "args": map[string]any{"name": "GITHUB_PERSONAL_ACCESS_TOKEN"}})
	if want := testserver.EnvAnswer("GITHUB_PERSONAL_ACCESS_TOKEN", canary); isErr || !strings.Contains(got, want) {
		t.Errorf("the stdio server's environment: got %q, want it to say %q", got, want)
	}
	got, isErr = callText(t, cs, "mcp", map[string]any{"server": "api", "tool": "echo", "args": map[string]any{"text": "through"}})
	if isErr || !strings.Contains(got, "through") {
		t.Errorf("the remote server: got %q (error %v), want the echo its header allows", got, isErr)
	}
	status, _ := callText(t, cs, "mcp", map[string]any{})
	noCanary("the mcp tool's status", []byte(status+got))
	cs.Close()
	noCanary("serve's log", log.Bytes())

	run("status")
	run("status", "--json")
	run("config", "show")
	run("secret", "list", "--json")
	run("call", "github_env", "name=GITHUB_PERSONAL_ACCESS_TOKEN")

	// No file holds a canary but the store's own (and the host's, which
	// import never changes).
	store := filepath.Join(home, ".local", "state", "switchboard", "credentials")
	stored, catalog := 0, false
	for _, dir := range []string{home, tmp} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if filepath.Dir(p) == store {
				stored++
				return nil
			}
			if p == hostFile {
				return nil
			}
			catalog = catalog || filepath.Base(p) == "catalog.db"
			noCanary(p, b)
			return nil
		})
	}
	if stored != 2 || !catalog {
		t.Errorf("the file store holds %d files, want the 2 secrets; catalog checked: %v", stored, catalog)
	}
}

func copyFile(t *testing.T, from, to string) string {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return to
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
