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

func TestSuggest(t *testing.T) {
	n := NewNames(map[string][]string{
		"ctx":    {"resolve-library-id", "get-library-docs"},
		"github": {"create_issue", "search_code", "get-file", "list_issues", "update_issue", "close_issue", "issue_comment", "get_issue"},
		"fs":     {"read_file", "write_file", "read_text_file", "list_directory"},
	})
	for _, tt := range []struct {
		name, server string
		want         []string // "server/name", in order
	}{
		// The server prefix is removed before matching, and a prefix of a
		// name is close however long the rest is.
		{"ctx_resolv", "", []string{"ctx/resolve-library-id"}},
		{"ctx-RESOLV", "", []string{"ctx/resolve-library-id"}},
		{"ctx_resolv", "ctx", []string{"ctx/resolve-library-id"}},
		{"resolv", "", []string{"ctx/resolve-library-id"}},
		// A substring is close, after prefixes.
		{"library", "", []string{"ctx/get-library-docs", "ctx/resolve-library-id"}},
		{"fs_text", "", []string{"fs/read_text_file"}},
		// Prefixes rank before substrings, and edits after both.
		{"read", "", []string{"fs/read_file", "fs/read_text_file"}},
		{"create_isue", "", []string{"github/create_issue"}},
		// At most five, closest first, ties by server and name.
		{"issue", "", []string{"github/issue_comment", "github/get_issue", "github/close_issue", "github/list_issues", "github/create_issue"}},
		// Short fragments and unrelated names suggest nothing.
		{"ge", "fs", nil},
		{"zzzzzzzzzz", "", nil},
	} {
		t.Run(tt.name+"@"+tt.server, func(t *testing.T) {
			var got []string
			for _, r := range n.Suggest(tt.name, tt.server, 5) {
				got = append(got, r.Server+"/"+r.Name)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("Suggest(%q, %q) = %v, want %v", tt.name, tt.server, got, tt.want)
			}
		})
	}
}

// TestUnknownSuggestsPrefixed checks the error an agent reads: the tool it
// meant, for a prefixed name cut short.
func TestUnknownSuggestsPrefixed(t *testing.T) {
	n := NewNames(map[string][]string{"ctx": {"resolve-library-id", "get-library-docs"}})
	_, err := n.Resolve("ctx_resolv", "")
	if !errors.Is(err, ErrUnknownTool) || !strings.Contains(err.Error(), "did you mean: resolve-library-id (ctx)") {
		t.Errorf("Resolve(ctx_resolv) = %v, want a suggestion of resolve-library-id", err)
	}
}
