package switchboard_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestSessionAllowOnly: a session's allow list (terret-mcp's, installed on
// one agent) lets it find, describe and call only the tools it matches,
// deny by default; a tool outside it is never called; another session of
// the engine is not affected.
func TestSessionAllowOnly(t *testing.T) {
	eng, home := fixtureEngine(t, "demo", "other")

	agent := eng.NewSession()
	if err := agent.AllowOnly("github_*"); err == nil || !strings.Contains(err.Error(), "mcp__SERVER__GLOB") {
		t.Errorf("a pattern not so written: %v", err)
	}
	if err := agent.AllowOnly("mcp__demo__echo", "mcp__demo__p*"); err != nil {
		t.Fatal(err)
	}
	r := agent.Handle(t.Context(), json.RawMessage(`{"search":"echo record","limit":20}`))
	for _, ti := range r.Details.Tools {
		if ti.Server != "demo" || (ti.Name != "echo" && !strings.HasPrefix(ti.Name, "p")) {
			t.Errorf("search found %s on %s, outside the allow list", ti.Name, ti.Server)
		}
		if len(ti.Also) > 0 {
			t.Errorf("search names other servers %v", ti.Also)
		}
	}
	if r := agent.Handle(t.Context(), json.RawMessage(`{"tool":"echo","server":"demo","args":{"text":"allowed"}}`)); r.IsError || !strings.Contains(r.Text, "allowed") {
		t.Errorf("an allowed call: %s", r.Text)
	}
	rec := filepath.Join(home, "rec")
	for _, req := range []string{
		`{"tool":"record","server":"demo","args":{"file":"` + rec + `","then":""}}`,
		`{"tool":"echo","server":"other","args":{"text":"no"}}`,
		`{"describe":"record","server":"demo"}`,
	} {
		if r := agent.Handle(t.Context(), json.RawMessage(req)); !r.IsError || !strings.Contains(r.Text, "not in this session's allow list") {
			t.Errorf("%s: %s", req, r.Text)
		}
	}
	if _, err := os.Stat(rec); err == nil {
		t.Error("a tool outside the allow list was called")
	}
	if r := eng.NewSession().Handle(t.Context(), json.RawMessage(`{"tool":"record","server":"demo","args":{"file":"`+rec+`","then":""}}`)); r.IsError {
		t.Errorf("another session: %s", r.Text)
	}
}

// TestSettingsAllowList: settings.includeTools (terret-mcp's allow list,
// mcp__SERVER__GLOB, deny by default) holds through the engine: search
// finds only what it allows, a tool it does not allow is not called, and a
// server it does not name offers nothing.
func TestSettingsAllowList(t *testing.T) {
	eng, home := fixtureEngineWith(t, map[string]any{"includeTools": []string{"mcp__demo__echo"}}, "demo", "other")
	r := eng.Handle(t.Context(), json.RawMessage(`{"search":"echo record","limit":20}`))
	if len(r.Details.Tools) != 1 || r.Details.Tools[0].Server != "demo" || r.Details.Tools[0].Name != "echo" {
		t.Errorf("search found %+v, want demo's echo alone", r.Details.Tools)
	}
	if r := eng.Handle(t.Context(), json.RawMessage(`{"tool":"echo","server":"demo","args":{"text":"in"}}`)); r.IsError {
		t.Errorf("the allowed tool: %s", r.Text)
	}
	rec := filepath.Join(home, "rec")
	for _, req := range []string{
		`{"tool":"record","server":"demo","args":{"file":"` + rec + `","then":""}}`,
		`{"tool":"echo","server":"other","args":{"text":"no"}}`,
	} {
		if r := eng.Handle(t.Context(), json.RawMessage(req)); !r.IsError {
			t.Errorf("%s: %s, want an error", req, r.Text)
		}
	}
	if _, err := os.Stat(rec); err == nil {
		t.Error("a tool the allow list leaves out was called")
	}
}

// fixtureEngine returns an engine over the fixture server configured under
// each of names, in a home of its own, closed when the test ends.
func fixtureEngine(t *testing.T, names ...string) (*switchboard.Engine, string) {
	t.Helper()
	return fixtureEngineWith(t, nil, names...)
}

// fixtureEngineWith is fixtureEngine with settings.
func fixtureEngineWith(t *testing.T, settings map[string]any, names ...string) (*switchboard.Engine, string) {
	t.Helper()
	home := t.TempDir()
	path, args, env := testserver.Command(testserver.Good)
	servers := map[string]any{}
	for _, n := range names {
		servers[n] = map[string]any{"command": path, "args": args, "env": env}
	}
	doc := map[string]any{"mcpServers": servers}
	if settings != nil {
		doc["settings"] = settings
	}
	data, _ := json.Marshal(doc)
	d := config.Dirs{Home: home}
	os.MkdirAll(filepath.Dir(d.UserFile()), 0o700)
	if err := os.WriteFile(d.UserFile(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	eng, err := switchboard.New(t.Context(), config.Load(d), &switchboard.Options{SpillDir: filepath.Join(home, "spill")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng, home
}
