//go:build !windows

package gateway

import (
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestCommandReferenceReachesServer: a ${cmd:…} reference in env runs
// when the server connects, and the server gets what the command printed
// (the fixture answers with its SHA-256, never the value); a failing
// command fails the connect naming the server and the field, not the
// output.
func TestCommandReferenceReachesServer(t *testing.T) {
	good := fixture(testserver.EnvReport)
	good["env"].(map[string]string)["API_TOKEN"] = "${cmd:printf %s c4nary-v4lue}"
	bad := fixture(testserver.EnvReport)
	bad["env"].(map[string]string)["API_TOKEN"] = "${cmd:sh -c 'echo leaked-0utput; exit 2'}"
	e := newEngine(t, map[string]def{"good": good, "bad": bad}, nil)
	r := must(t, e, `{"tool": "env", "server": "good", "args": {"name": "API_TOKEN"}}`)
	wantText(t, r, testserver.EnvAnswer("API_TOKEN", "c4nary-v4lue"))
	r = handle(t, e, `{"tool": "env", "server": "bad", "args": {"name": "API_TOKEN"}}`)
	if !r.IsError {
		t.Fatalf("a failing command connected: %s", r.Text)
	}
	wantText(t, r, `server "bad"`, "mcpServers.bad.env.API_TOKEN", `the command "sh" failed`)
	if strings.Contains(r.Text, "leaked-0utput") {
		t.Errorf("the command's output is in the error: %s", r.Text)
	}
}
