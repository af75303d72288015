package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/idptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// bearer adds an access token to each request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestApprovalsCommand: through the real serve --http with a real
// OpenID provider, beta's call of a tool whose rule names approvers waits;
// switchboard approvals lists it to alpha (in the approver group), not to
// beta, and alpha's allow lets the call through.
func TestApprovalsCommand(t *testing.T) {
	// serve's address is known before it starts: the provider issues
	// tokens for it.
	var base, url string
	var idp *idptest.IdP
	var env []string
	for attempt := 1; url == ""; attempt++ {
		addr := freeAddr(t)
		base = "http://" + addr
		idp = idptest.Start(t, base+"/mcp")
		home := t.TempDir()
		fixture, fargs, fenv := testserver.Command(testserver.Good)
		writeConfig(t, home, map[string]any{
			"mcpServers": map[string]any{"f": map[string]any{"command": fixture, "args": fargs, "env": fenv,
				"approve": map[string]any{"when": "always", "approvers": []string{"admins"}}}},
			"settings": map[string]any{"identity": map[string]any{"issuer": idp.Issuer, "audience": base + "/mcp", "adminGroup": "admins"}},
		})
		env = serveEnv(home)
		var err error
		if url, err = tryServe(t, env, "--http", addr); err != nil && (!portTaken(err.Error()) || attempt == 5) {
			t.Fatal(err)
		}
	}
	alphaTok := idp.Token(t, idptest.Alpha, idptest.Password)
	betaTok := idp.Token(t, idptest.Beta, idptest.Password)

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "beta", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer(betaTok)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() { // no t.Fatal off the test's goroutine
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"tool": "echo", "server": "f", "args": map[string]any{"text": "hi"}}})
		done <- answer{res, err}
	}()
	textOf := func(a answer) string {
		if a.err != nil {
			return a.err.Error()
		}
		return mcptest.Text(a.res)
	}

	as := func(token string, args ...string) (string, string, int) {
		return switchboardRun(t, append(env, "SWITCHBOARD_TOKEN="+token), "", append([]string{"approvals", "--attach", base}, args...)...)
	}
	var id string
	for id == "" { // each look is a request to the gateway, until the call waits
		out, errOut, code := as(alphaTok)
		if code != 0 {
			t.Fatalf("approvals as alpha: exit %d: %s", code, errOut)
		}
		if strings.Contains(out, "f/echo") {
			if !strings.Contains(out, "by "+idptest.BetaSub) || !strings.Contains(out, "approvers admins") {
				t.Errorf("approvals as alpha:\n%s", out)
			}
			id, _, _ = strings.Cut(out, "\t")
		}
		select {
		case a := <-done:
			t.Fatalf("the call ended before anyone approved it: %s", textOf(a))
		default:
		}
	}
	if out, _, code := as(betaTok); code != 0 || !strings.Contains(out, "no call waits for your approval") {
		t.Errorf("approvals as beta: exit %d:\n%s", code, out)
	}
	if _, errOut, code := as(betaTok, "allow", id); code == 0 || !strings.Contains(errOut, "not a member of the approver groups") {
		t.Errorf("beta allowing: exit %d: %s", code, errOut)
	}
	if out, errOut, code := as(alphaTok, "allow", id); code != 0 || !strings.Contains(out, "allowed approval "+id) {
		t.Fatalf("alpha allowing: exit %d: %s %s", code, out, errOut)
	}
	if a := <-done; a.err != nil || a.res.IsError || textOf(a) != "hi" {
		t.Fatalf("the call after alpha allowed it: %s", textOf(a))
	}
}
