package proxy

import (
	"slices"
	"strings"
	"testing"
)

// TestHints checks both forms of every suggestion. The agents' form is the
// text the mcp tool has always shown: it must not change.
func TestHints(t *testing.T) {
	tests := []struct {
		name          string
		hint          func(Audience) string
		agent, person string
	}{
		{"ListResources", func(a Audience) string { return a.ListResources("ev2") },
			`{"operation": "resources.list", "server": "ev2"}`, `switchboard resources ev2`},
		{"ReadResource", func(a Audience) string { return a.ReadResource("ev2") },
			`{"operation": "resources.read", "server": "ev2", "resource": REF}`, `switchboard read ev2 REF`},
		{"ReadTemplate", func(a Audience) string { return a.ReadTemplate("ev2") },
			`by giving it as "resource"`, `with switchboard read ev2 URI`},
		{"ResourcesListName", func(a Audience) string { return a.ResourcesListName("ev2") },
			`resources.list`, `switchboard resources ev2`},
		{"GetPrompt", func(a Audience) string { return a.GetPrompt("ev2") },
			`{"operation": "prompts.get", "server": "ev2", "prompt": NAME, "args": {…}}`, `switchboard prompt ev2 NAME [key=value …]`},
		{"CallTool", Audience.CallTool,
			`{"tool": NAME, "args": {…}}`, `switchboard call NAME [key=value …]`},
		{"ListTools", Audience.ListTools,
			`{"server": NAME}`, `switchboard tools SERVER`},
		{"Search", func(a Audience) string { return a.Search("it's c++") },
			`{"search": "it's c++"}`, `switchboard search 'it'\''s c++'`},
		{"ServerField", Audience.ServerField,
			`"server"`, `--server SERVER`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.hint(Agents); got != tt.agent {
				t.Errorf("for agents: got %s, want %s", got, tt.agent)
			}
			if got := tt.hint(People); got != tt.person {
				t.Errorf("for people: got %s, want %s", got, tt.person)
			}
		})
	}
}

func TestResolveHintsForPeople(t *testing.T) {
	n := testNames()
	n.Audience = People
	if _, err := n.Resolve("zzzzzzzz", ""); err == nil || err.Error() != `unknown tool "zzzzzzzz" on any server (hint: search for it: switchboard search zzzzzzzz)` {
		t.Errorf("unknown tool: got %v", err)
	}
	if _, err := n.Resolve("create_issue", ""); err == nil || !strings.Contains(err.Error(), "(hint: add --server SERVER, or use a prefixed name such as") {
		t.Errorf("ambiguous tool: got %v", err)
	}
}

func TestClosest(t *testing.T) {
	names := []string{"status", "search", "setup", "serve", "github", "gitlab", "my-server"}
	tests := []struct {
		name string
		want []string
	}{
		{"statsu", []string{"status"}},
		{"gihtub", []string{"github"}},
		{"GitHub", []string{"github"}},
		{"my_server", []string{"my-server"}},
		{"serv", []string{"serve"}},
		{"zzzzzz", nil},
	}
	for _, tt := range tests {
		if got := Closest(tt.name, names, 3); !slices.Equal(got, tt.want) {
			t.Errorf("Closest(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
