package main

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
)

// TestServerOfTool: a call that names its tool alone starts the server
// the name names (or the only one enabled) before the catalog is read;
// a name that names none starts nothing, and a disabled server is never
// started.
func TestServerOfTool(t *testing.T) {
	cfg := &config.Config{Servers: []*config.Server{
		{Name: "git"}, {Name: "github"}, {Name: "github_enterprise"}, {Name: "off", Disabled: true},
	}}
	for tool, want := range map[string]string{
		"git_status":                  "git",
		"github_create_issue":         "github",
		"github_enterprise_list_orgs": "github_enterprise",
		"create_issue":                "",
		"off_tool":                    "",
		"gitstatus":                   "",
	} {
		if got := serverOfTool(cfg, tool); got != want {
			t.Errorf("serverOfTool(%q) = %q, want %q", tool, got, want)
		}
	}
	one := &config.Config{Servers: []*config.Server{{Name: "everything"}, {Name: "off", Disabled: true}}}
	if got := serverOfTool(one, "get-sum"); got != "everything" {
		t.Errorf("with one server enabled, serverOfTool(get-sum) = %q, want everything", got)
	}
}
