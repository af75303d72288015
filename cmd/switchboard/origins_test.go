package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// TestRedirectCredentials: the real binary, through `call` and through
// serve's mcp tool. A server whose headers hold canaries and that
// redirects (307) to another origin, the same address on another port,
// where Go's client would keep even the Authorization header, gets its
// call refused with an error that names both origins, and the other
// origin receives nothing. With "redirects": "follow-without-credentials"
// the call is answered there, without the canaries.
func TestRedirectCredentials(t *testing.T) {
	const token, key = "CANARY-cli-token", "CANARY-cli-key"
	catcher := hostile.NewCatcher(t)
	redirector := httptest.NewServer(hostile.Redirect(http.StatusTemporaryRedirect, catcher.URL))
	t.Cleanup(redirector.Close)
	home := t.TempDir()
	headers := map[string]any{"Authorization": "Bearer ${SB_TOKEN}", "X-Api-Key": "${SB_KEY}"}
	writeConfig(t, home, map[string]any{"mcpServers": map[string]any{
		"api":     map[string]any{"url": redirector.URL + "/mcp", "headers": headers},
		"follows": map[string]any{"url": redirector.URL + "/mcp", "headers": headers, "redirects": "follow-without-credentials"},
	}})
	env := append(serveEnv(home), "SB_TOKEN="+token, "SB_KEY="+key)
	want := "refusing the redirect from " + redirector.URL + " to " + catcher.URL + ": the server's headers and token go only to its own origin"

	_, errOut, code := switchboardRun(t, env, "", "call", "echo", "--server", "api", "text=hi")
	if code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("call: exit %d, stderr:\n%s", code, errOut)
	}
	text, isErr := callMCP(t, env, map[string]any{"tool": "echo", "server": "api", "args": map[string]any{"text": "hi"}})
	if !isErr || !strings.Contains(text, want) {
		t.Errorf("mcp tool: error %v, %s", isErr, text)
	}
	if got := catcher.Requests(); len(got) != 0 {
		t.Fatalf("the other origin received %d requests, with %q", len(got), catcher.Leaked(token, key))
	}

	out, errOut, code := switchboardRun(t, env, "", "call", "echo", "--server", "follows", "text=hi")
	if code != 0 || strings.TrimSpace(out) != "hi" {
		t.Errorf("call, following without credentials: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	text, isErr = callMCP(t, env, map[string]any{"tool": "echo", "server": "follows", "args": map[string]any{"text": "hi"}})
	if isErr || !strings.Contains(text, "hi") {
		t.Errorf("mcp tool, following without credentials: error %v, %s", isErr, text)
	}
	if len(catcher.Requests()) == 0 {
		t.Error("the redirect was not followed")
	}
	if leaked := catcher.Leaked(token, key); len(leaked) != 0 {
		t.Errorf("the other origin received %q", leaked)
	}
}

// TestRedirectOAuthToken: the real binary, logged in with OAuth, through
// `call` and serve's mcp tool. Once the server redirects to another
// origin, its token is not sent there: the call is refused, naming both
// origins, and the other origin receives nothing.
func TestRedirectOAuthToken(t *testing.T) {
	catcher := hostile.NewCatcher(t)
	var turned atomic.Bool
	as := oauthtest.New(t, oauthtest.Options{Wrap: func(next http.Handler) http.Handler {
		redirect := hostile.Redirect(http.StatusTemporaryRedirect, catcher.URL)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if turned.Load() && r.URL.Path == "/mcp" {
				redirect.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	}})
	home := t.TempDir()
	writeConfig(t, home, map[string]any{"mcpServers": map[string]any{"api": map[string]any{"url": as.URL()}}, "settings": fileStore})
	env := serveEnv(home)
	if _, errOut, code := switchboardRun(t, append(env, "BROWSER=follow"), "", "auth", "login", "api"); code != 0 {
		t.Fatalf("auth login: exit %d:\n%s", code, errOut)
	}
	turned.Store(true)
	want := "refusing the redirect from " + as.RS.URL + " to " + catcher.URL
	_, errOut, code := switchboardRun(t, env, "", "call", "echo", "--server", "api", "text=hi", "--no-login")
	if code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("call: exit %d, stderr:\n%s", code, errOut)
	}
	text, isErr := callMCP(t, env, map[string]any{"tool": "echo", "server": "api", "args": map[string]any{"text": "hi"}})
	if !isErr || !strings.Contains(text, want) {
		t.Errorf("mcp tool: error %v, %s", isErr, text)
	}
	if got := catcher.Requests(); len(got) != 0 {
		t.Errorf("the other origin received %d requests, with %q", len(got), catcher.Leaked(oauthtest.CanaryPrefix))
	}
}
