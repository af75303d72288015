package proxy

import (
	"errors"
	"strings"
	"testing"
)

func testNames() *Names {
	return NewNames(map[string][]string{
		"github":     {"create_issue", "search_code", "get-file"},
		"gitlab":     {"create_issue", "list_projects"},
		"everything": {"echo", "get-sum", "Echo"},
		"my-server":  {"run"},
	})
}

func TestResolve(t *testing.T) {
	n := testNames()
	tests := []struct {
		name, server string
		want         ToolRef
	}{
		{"search_code", "", ToolRef{"github", "search_code"}},
		{"SEARCH-CODE", "", ToolRef{"github", "search_code"}},
		{"get_file", "", ToolRef{"github", "get-file"}},
		{"create_issue", "gitlab", ToolRef{"gitlab", "create_issue"}},
		{"create_issue", "GitLab", ToolRef{"gitlab", "create_issue"}},
		{"github_create_issue", "", ToolRef{"github", "create_issue"}},
		{"gitlab-create-issue", "", ToolRef{"gitlab", "create_issue"}},
		{"github_create_issue", "github", ToolRef{"github", "create_issue"}},
		{"get_sum", "", ToolRef{"everything", "get-sum"}},
		{"echo", "", ToolRef{"everything", "echo"}}, // exact case wins over Echo
		{"Echo", "", ToolRef{"everything", "Echo"}}, // and the other way
		{"my_server_run", "", ToolRef{"my-server", "run"}},
	}
	for _, tt := range tests {
		t.Run(tt.name+"@"+tt.server, func(t *testing.T) {
			got, err := n.Resolve(tt.name, tt.server)
			if err != nil || got != tt.want {
				t.Errorf("Resolve(%q, %q) = %v, %v; want %v", tt.name, tt.server, got, err, tt.want)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	n := testNames()
	tests := []struct {
		name, server string
		is           error
		contains     []string
	}{
		{"create_issue", "", ErrAmbiguous, []string{`"create_issue" on "github"`, `"create_issue" on "gitlab"`, "nothing was called"}},
		{"ECHO", "", ErrAmbiguous, []string{`"echo" on "everything"`, `"Echo" on "everything"`}},
		{"create_isue", "", ErrUnknownTool, []string{"did you mean", "create_issue (github)", "create_issue (gitlab)"}},
		{"create_issue", "everything", ErrUnknownTool, []string{`on "everything"`}},
		{"zzzzzzzzzz", "", ErrUnknownTool, []string{`{"search": "zzzzzzzzzz"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name+"@"+tt.server, func(t *testing.T) {
			_, err := n.Resolve(tt.name, tt.server)
			if !errors.Is(err, tt.is) {
				t.Fatalf("Resolve(%q, %q) = %v, want %v", tt.name, tt.server, err, tt.is)
			}
			for _, c := range tt.contains {
				if !strings.Contains(err.Error(), c) {
					t.Errorf("error %q does not contain %q", err, c)
				}
			}
		})
	}
}

func TestSuggestAtMostFive(t *testing.T) {
	tools := map[string][]string{}
	for _, s := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		tools[s] = []string{"read_file"}
	}
	if got := NewNames(tools).Suggest("read_fil", "", 5); len(got) != 5 {
		t.Errorf("Suggest returned %d tools, want 5", len(got))
	}
}
