package main

import (
	"bytes"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestCanaryStaysHome holds the trust boundary's acceptance line for one
// secret through the real binary: a canary stored with switchboard secret
// set, given to a stdio server in its env and to an HTTP server in a
// header, appears in no byte sent to any origin but its server's (the HTTP
// server redirects to another origin, which receives nothing), and in no
// file switchboard leaves behind (logs, the audit trail, the catalog,
// pins, spill files of a result too large to show), and in nothing the
// CLI or an agent through serve's mcp tool is shown, whether the server
// answers with it, spills it or fails with it.
func TestCanaryStaysHome(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	catcher := hostile.NewCatcher(t)
	redirector := httptest.NewServer(hostile.Redirect(http.StatusTemporaryRedirect, catcher.URL))
	t.Cleanup(redirector.Close)
	path, args, env := hostile.Command(hostile.Leaker)
	env["LEAKED"] = "${secret:CANARY}"
	env[mcptest.OwnerEnv] = os.Getenv(mcptest.OwnerEnv)
	home := serveHome(t, map[string]any{
		"h":   map[string]any{"command": path, "args": args, "env": env},
		"api": map[string]any{"url": redirector.URL + "/mcp", "headers": map[string]any{"X-Api-Key": "${secret:CANARY}"}},
	}, map[string]any{
		"credentialStore": "file",
		"audit":           map[string]any{"payloads": true},
		"output":          map[string]any{"maxBytes": 4096},
	})
	set := switchboardCmd(t, home, "secret", "set", "CANARY")
	set.Stdin = strings.NewReader(canary + "\n")
	if out, err := set.CombinedOutput(); err != nil {
		t.Fatalf("secret set: %v: %s", err, out)
	}

	var shown bytes.Buffer // what the CLI and the agent were shown
	for _, argv := range [][]string{
		{"call", "flood", "--server", "h", "name=LEAKED", "lines=500"},
		{"call", "reveal", "--server", "h", "name=LEAKED"},
		{"call", "fail", "--server", "h", "name=LEAKED"},
		{"call", "echo", "--server", "api", "text=hi"},
		{"call", "flood", "--server", "h", "name=LEAKED", "lines=500", "--json"},
	} {
		c := switchboardCmd(t, home, argv...)
		c.Stdout, c.Stderr = &shown, &shown
		_ = c.Run()
	}
	cmd, cs := serveStdio(t, home, mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil))
	for _, a := range []map[string]any{
		{"tool": "flood", "server": "h", "args": map[string]any{"name": "LEAKED", "lines": 500}},
		{"tool": "reveal", "server": "h", "args": map[string]any{"name": "LEAKED"}},
		{"tool": "echo", "server": "api", "args": map[string]any{"text": "hi"}},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: a})
		if err != nil {
			shown.WriteString(err.Error())
			continue
		}
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				shown.WriteString(tc.Text)
			}
		}
		shown.WriteString(toText(res.StructuredContent))
	}
	cs.Close()
	_ = cmd.Wait()

	if strings.Contains(shown.String(), canary) {
		t.Errorf("the canary was shown:\n%s", shown.String())
	}
	if !strings.Contains(shown.String(), "[redacted]") {
		t.Errorf("the servers' words were not kept with the canary redacted:\n%s", shown.String())
	}
	if reqs := catcher.Requests(); len(reqs) != 0 {
		t.Errorf("another origin received %d requests, %q of them with the canary", len(reqs), catcher.Leaked(canary))
	}
	// Every file switchboard left in the home (the credential store
	// excepted, which keeps the secret by design), spill files included.
	spilled := 0
	err := filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(home, p)
		if strings.Contains(rel, "credentials") || strings.HasPrefix(rel, filepath.Join(".config", "switchboard", "secrets")) {
			return nil
		}
		if strings.Contains(rel, "spill") {
			spilled++
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(canary)) {
			t.Errorf("%s holds the canary", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if spilled == 0 {
		t.Error("no spill file was left: the flood did not spill, so spills were not checked")
	}
}
