package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// engineOver writes files (path relative to home → content) and returns an
// engine over the configuration as loaded, errors and all, with project as
// the project directory (relative to home; "" for none).
func engineOver(t *testing.T, home, project string, files map[string]string) *Engine {
	t.Helper()
	for rel, content := range files {
		path := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := config.Dirs{Home: home}
	if project != "" {
		d.Project = filepath.Join(home, project)
	}
	e, err := New(context.Background(), config.Load(d), &Options{SpillDir: filepath.Join(home, "spill")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

const userFile = ".config/switchboard/config.json"

// TestStatusShowsConfigErrors checks that when the only server's definition
// is invalid, {} shows the error with file:line:col and the server by name,
// not "no servers configured".
func TestStatusShowsConfigErrors(t *testing.T) {
	home := t.TempDir()
	e := engineOver(t, home, "", map[string]string{userFile: "{\n  \"mcpServers\": {\n    \"x\": {\"args\": [\"a\"]}\n  }\n}\n"})
	path := filepath.Join(home, userFile)
	for _, r := range []*proxy.Result{handle(t, e, `{}`), e.Do(t.Context(), &proxy.Request{Action: proxy.ActionStatus})} {
		if r.IsError {
			t.Fatalf("status is an error:\n%s", r.Text)
		}
		// The error is the server's: it blocks nothing else (issue 30).
		wantText(t, r,
			"configuration errors:",
			path+":3:10: mcpServers.x: needs \"command\"",
			"1 server (0 connected)",
			"x  invalid: server \"x\": "+path+":3:10:")
		if strings.Contains(r.Text, "no servers configured") {
			t.Errorf("status says no servers are configured:\n%s", r.Text)
		}
		cs := r.Details.Config
		if cs == nil || cs.Blocked || len(cs.Errors) != 1 || cs.Errors[0].File != path || cs.Errors[0].Line != 3 || cs.Errors[0].Col != 10 || cs.Errors[0].Server != "x" {
			t.Errorf("details.config = %+v, want the server's one error at 3:10, blocking nothing else", cs)
		}
		if len(r.Details.Servers) != 1 || r.Details.Servers[0].Name != "x" || r.Details.Servers[0].State != "invalid" || r.Details.Servers[0].ErrorClass != "config" {
			t.Errorf("details.servers = %+v, want x invalid", r.Details.Servers)
		}
	}
	if st := e.Status(t.Context()); len(st) != 1 || st[0].Name != "x" || !strings.Contains(st[0].Error, `needs "command"`) {
		t.Errorf("Status() = %+v, want x with its error", st)
	}
}

// TestStatusShowsInvalidServer checks that a server whose definition alone
// is invalid is listed with its error beside the usable ones.
func TestStatusShowsInvalidServer(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := t.TempDir()
	good, _, _ := testserver.Command(testserver.Good)
	e := engineOver(t, home, "", map[string]string{userFile: `{"mcpServers": {
		"good": {"command": "` + good + `"},
		"lit": {"command": "srv", "env": {"API_TOKEN": "literal-value"}}
	}}`})
	r := must(t, e, `{}`)
	wantText(t, r, "configuration errors:\n", "2 servers (0 connected)", "good  disconnected", "lit  invalid: ", "mcpServers.lit.env.API_TOKEN")
	if strings.Contains(r.Text, "no server is usable") || strings.Contains(r.Text, "literal-value") {
		t.Errorf("status blocks everything, or shows the literal:\n%s", r.Text)
	}
	if cs := r.Details.Config; cs == nil || cs.Blocked || len(cs.Errors) != 1 {
		t.Errorf("details.config = %+v, want one error that blocks nothing", cs)
	}
}

// TestUntrustedProject checks that {} shows ignored project files with the
// reason and the trust hint, and that a call to a server defined there
// says so and names the command that trusts it.
func TestUntrustedProject(t *testing.T) {
	home := t.TempDir()
	e := engineOver(t, home, "proj", map[string]string{
		"proj/.mcp.json": `{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}`,
	})
	proj := filepath.Join(home, "proj")
	r := must(t, e, `{}`)
	wantText(t, r, "no servers configured", "ignored project files (the project is not trusted):",
		filepath.Join(proj, ".mcp.json")+" (servers: memory)", "hint: review them, then run switchboard trust in "+proj)
	if strings.Contains(r.Text, "switchboard add") {
		t.Errorf("status suggests adding a server the project defines:\n%s", r.Text)
	}
	ip := r.Details.Config.Ignored
	if ip == nil || ip.Dir != proj || ip.Reason != "the project is not trusted" || len(ip.Files) != 1 || ip.Files[0].Servers[0] != "memory" {
		t.Errorf("details.config.ignored = %+v", ip)
	}
	for _, req := range []string{
		`{"tool":"create_entities","server":"memory"}`, `{"tool":"memory_create_entities"}`,
		`{"describe":"Memory_read_graph"}`, `{"server":"memory"}`,
	} {
		r := handle(t, e, req)
		if !r.IsError {
			t.Fatalf("%s: got success:\n%s", req, r.Text)
		}
		wantText(t, r, `server "memory" is defined in `+filepath.Join(proj, ".mcp.json")+", which is ignored: the project is not trusted",
			"hint: review it, then run switchboard trust in "+proj)
	}
}

// TestNeedsAuthEverywhere checks that a 401 after connecting makes the
// server needs-auth in {}, in this engine and, through the catalog, in the
// next one (another process), and that it clears once the server answers.
func TestNeedsAuthEverywhere(t *testing.T) {
	home := t.TempDir()
	refuse := &atomic.Bool{}
	servers := map[string]def{"api": {"url": apiServer(t, refuse).URL}}

	e := engineIn(t, home, servers, nil, nil)
	must(t, e, `{"server":"api"}`) // connected and indexed
	refuse.Store(true)
	r := handle(t, e, `{"tool":"echo","server":"api","args":{"text":"hi"}}`)
	wantText(t, r, `calling "echo" on "api": the server answered HTTP 401 Unauthorized; hint: give it credentials in the server's headers`)
	r = must(t, e, `{}`)
	wantText(t, r, "api  needs-auth  1 tool  indexed ", "last error (auth, ", "HTTP 401 Unauthorized; hint: give it credentials in the server's headers")
	if st := r.Details.Servers[0]; st.State != "needs-auth" || st.ErrorClass != "auth" || st.ErrorAt.IsZero() || st.IndexedAt.IsZero() || st.Tools != 1 {
		t.Errorf("status %+v, want needs-auth with the error, a tool and when it was indexed", st)
	}
	e.Close()

	// Another process learns it from the catalog, without connecting.
	e = engineIn(t, home, servers, nil, nil)
	r = must(t, e, `{}`)
	wantText(t, r, "api  needs-auth  1 tool", "last error (auth, ", "HTTP 401 Unauthorized")
	wantNoConnection(t, e)
	refuse.Store(false)
	must(t, e, `{"tool":"echo","server":"api","args":{"text":"back"}}`)
	r = must(t, e, `{}`)
	wantText(t, r, "api  connected")
	e.Close()

	e = engineIn(t, home, servers, nil, nil)
	if st := e.Status(t.Context())[0]; st.State != "disconnected" || st.Error != "" {
		t.Errorf("after the server answered again: status %+v, want disconnected and no error", st)
	}
}

func wantNoConnection(t *testing.T, e *Engine) {
	t.Helper()
	for _, st := range e.pool.Snapshot() {
		if st.Generation != 0 {
			t.Errorf("server %s connected", st.Name)
		}
	}
}

// TestSuggestsPrefixedNames checks that describe ctx_resolv suggests
// ctx_resolve-library-id.
func TestSuggestsPrefixedNames(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	e := newEngine(t, map[string]def{"ctx": fixture(testserver.Catalog)}, nil)
	for _, r := range []*proxy.Result{
		handle(t, e, `{"describe":"ctx_resolv"}`),
		e.Do(t.Context(), &proxy.Request{Action: proxy.ActionCall, Name: "ctx_resolv"}),
		handle(t, e, `{"describe":"resolv","server":"ctx"}`),
	} {
		if !r.IsError {
			t.Fatalf("got success:\n%s", r.Text)
		}
		wantText(t, r, `unknown tool`, "did you mean: resolve-library-id (ctx)")
	}
}
