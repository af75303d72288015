package switchboard_test

import (
	"strings"
	"testing"
)

// TestSessionRunScript: the library runs a script in a session, under the
// session's allow list: a tool it may not use is refused inside the
// script, and the rest works.
func TestSessionRunScript(t *testing.T) {
	e, _ := fixtureEngine(t, "a", "b")
	s := e.NewSession()
	if err := s.AllowOnly("mcp__a__echo"); err != nil {
		t.Fatal(err)
	}
	r := s.RunScript(t.Context(), `const x = await tools.call("echo", {text: "hi"}, {server: "a"});
const y = await tools.call("echo", {text: "hi"}, {server: "b"});
[x.data.content[0].text, y.ok, y.error.code]`)
	if r.IsError || r.Text != `["hi",false,"unknown_tool"]` && r.Text != `["hi",false,"not_allowed"]` {
		t.Errorf("got %q", r.Text)
	}
	if r.Details.Script == nil || r.Details.Script.Calls != 2 {
		t.Errorf("details %+v", r.Details.Script)
	}
}

// TestScriptTimeoutSetting: settings.scriptTimeoutMs bounds a script.
func TestScriptTimeoutSetting(t *testing.T) {
	e, _ := fixtureEngineWith(t, map[string]any{"scriptTimeoutMs": 300}, "a")
	r := e.RunScript(t.Context(), "while (true) {}")
	if !r.IsError || r.Details.Script.Error.Code != "timeout" || !strings.Contains(r.Text, "deadline of 300ms") {
		t.Errorf("got %q", r.Text)
	}
}
