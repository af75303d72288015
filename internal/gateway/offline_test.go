package gateway

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// engineIn writes servers and settings into the user configuration under
// home and returns an engine over it, closed when the test ends unless the
// test closes it first. Engines made in one home share its catalog: a
// second one is the same user after a restart.
func engineIn(t testing.TB, home string, servers map[string]def, settings map[string]any, opts *Options) *Engine {
	t.Helper()
	cfg := userConfig(t, home, servers, settings)
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.SpillDir = filepath.Join(home, "spill")
	e, err := New(context.Background(), cfg, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// userConfig writes servers and settings into the user configuration of
// home and loads it.
func userConfig(t testing.TB, home string, servers map[string]def, settings map[string]any) *config.Config {
	t.Helper()
	d := config.Dirs{Home: home}
	doc := map[string]any{"mcpServers": servers}
	if settings != nil {
		doc["settings"] = settings
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(d.UserFile()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.UserFile(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Load(d)
	if err := cfg.Err(); err != nil {
		t.Fatal(err)
	}
	for _, p := range cfg.Errors() {
		t.Fatalf("config error: %v", p)
	}
	return cfg
}

// wantNoneConnected checks that no server was ever started: every one is
// disconnected, none with an error.
func wantNoneConnected(t *testing.T, e *Engine, after string) {
	t.Helper()
	for _, st := range e.pool.Snapshot() {
		if st.State != upstream.StateDisconnected || st.Error != "" {
			t.Errorf("after %s: server %s is %s (error %q), want disconnected and never started", after, st.Name, st.State, st.Error)
		}
	}
	for _, st := range e.Status(t.Context()) {
		if st.State != "disconnected" {
			t.Errorf("after %s: status of %s is %s, want disconnected", after, st.Name, st.State)
		}
	}
}

// TestOfflineAfterRestart indexes two servers, stops them all, and checks
// that a new engine over the same catalog (a restart) answers search and
// describe without starting any server.
func TestOfflineAfterRestart(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := t.TempDir()
	servers := map[string]def{"tools": fixture(testserver.Catalog), "good": fixture(testserver.Good)}
	first := engineIn(t, home, servers, nil, nil)
	results, err := first.Index(t.Context(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Error != "" || r.Tools == 0 {
			t.Fatalf("indexing %s: %d tools, error %q", r.Server, r.Tools, r.Error)
		}
	}
	if err := first.Close(); err != nil { // every server stops
		t.Fatal(err)
	}

	e := engineIn(t, home, servers, nil, nil)
	r := must(t, e, `{"search":"create issue"}`)
	if len(r.Details.Tools) == 0 || r.Details.Tools[0].Name != "issue_create" {
		t.Errorf("search after a restart: got %+v, want issue_create first\n%s", r.Details.Tools, r.Text)
	}
	if r.Details.Search.Mode != "lexical" || r.Details.Search.Reason != "" || len(r.Details.Search.Failed) != 0 {
		t.Errorf("search info %+v, want lexical, no reason, nothing failed", r.Details.Search)
	}
	r = must(t, e, `{"describe":"resolve_library_id"}`)
	wantText(t, r, `tool "resolve-library-id" on "tools"`, "Context7 library ID", "input schema:", `"query"`)
	r = must(t, e, `{"describe":"echo","server":"good"}`)
	wantText(t, r, `tool "echo" on "good"`, `"text"`)
	must(t, e, `{"search":"echo text","server":"good"}`)
	must(t, e, `{"search":"^issue_","regex":true}`)
	wantNoneConnected(t, e, "search and describe")
	if st := e.Status(t.Context()); st[0].Tools < 0 || st[1].Tools < 0 {
		t.Errorf("status after a restart does not know the tool counts: %+v", st)
	}
}

// TestSearchQueries runs the queries agents send, at the engine, from a
// catalog built by indexing a real server: each behaves sensibly and none
// is an error.
func TestSearchQueries(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := t.TempDir()
	servers := map[string]def{"tools": fixture(testserver.Catalog)}
	first := engineIn(t, home, servers, nil, nil)
	if _, err := first.Index(t.Context(), nil, nil); err != nil {
		t.Fatal(err)
	}
	first.Close()
	e := engineIn(t, home, servers, nil, nil)

	for _, tt := range []struct {
		query string
		first string // "" when any answer (or none) will do
	}{
		{"create issue", "issue_create"},
		{"issue_create", "issue_create"},
		{"IssueCreate", "issue_create"},
		{"github", "GitHubSearch"},
		{"resolve-library-id", "resolve-library-id"},
		{"resolveLibraryId", "resolve-library-id"},
		{"tools.get-library-docs", "get-library-docs"},
		{"c++", "compile_cpp"},
		{"C++ compiler", "compile_cpp"},
		{`"quoted"`, "quote_reply"},
		{`"weather forecast"`, "get_forecast"},
		{"文件搜索", "file_search"},
		{"搜索文件", "file_search"},
		{"(", ""}, {`"`, ""}, {"*", ""}, {"%", ""}, {"-", ""}, {"issue_create()", "issue_create"},
		{"name:search OR 1=1; --", ""}, {"😀", ""}, {strings.Repeat("x", 2000), ""},
	} {
		req, _ := json.Marshal(map[string]any{"search": tt.query})
		r := handle(t, e, string(req))
		if r.IsError {
			t.Errorf("search %q: error result:\n%s", tt.query, r.Text)
			continue
		}
		if tt.first == "" {
			continue
		}
		if len(r.Details.Tools) == 0 || r.Details.Tools[0].Name != tt.first {
			t.Errorf("search %q: got %v first, want %s\n%s", tt.query, names(r.Details.Tools), tt.first, r.Text)
		}
	}
	// Regex mode: an invalid pattern is an error that says why; none connects.
	r := handle(t, e, `{"search":"issue_(","regex":true}`)
	if !r.IsError {
		t.Errorf("an invalid regex: got success:\n%s", r.Text)
	}
	wantText(t, r, "invalid regex")
	wantNoneConnected(t, e, "searching")
}

func names(ts []proxy.ToolInfo) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}
