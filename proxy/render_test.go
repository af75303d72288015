package proxy

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/bound"
)

// The renderers are pure: each test gives one what an operation gathered
// and checks the text a model reads and the details a program reads.

func TestRenderers(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	yes := true
	tests := []struct {
		name     string
		r        *Result
		text     string
		details  Details
		isError  bool
		spillFor string
	}{
		{
			name:    "status with no servers",
			r:       Status(nil, nil, now),
			text:    "no servers configured (hint: switchboard add NAME -- COMMAND ARGS…)",
			details: Details{Operation: "status"}, spillFor: "status",
		},
		{
			name: "status",
			r: Status([]ServerStatus{
				{Name: "a", State: "connected", Tools: 1, IndexedAt: now.Add(-time.Minute), Headline: "Hello."},
				{Name: "b", State: "failed", Tools: -1, ErrorClass: "start", Error: "exited\nhint: fix it", ErrorAt: now.Add(-2 * time.Second)},
				{Name: "c", State: "invalid", Tools: -1, ErrorClass: "config", Error: "bad command"},
			}, nil, now),
			text: "3 servers (1 connected)\n" +
				"a  connected  1 tool  indexed 1m0s ago  — Hello.\n" +
				"b  failed  last error (start, 2s ago): exited hint: fix it\n" +
				"c  invalid: bad command",
			details: Details{Operation: "status", Count: 3, Servers: []ServerStatus{
				{Name: "a", State: "connected", Tools: 1, IndexedAt: now.Add(-time.Minute), Headline: "Hello."},
				{Name: "b", State: "failed", Tools: -1, ErrorClass: "start", Error: "exited\nhint: fix it", ErrorAt: now.Add(-2 * time.Second)},
				{Name: "c", State: "invalid", Tools: -1, ErrorClass: "config", Error: "bad command"},
			}}, spillFor: "status",
		},
		{
			name: "status of a blocked configuration and an ignored project",
			r: Status([]ServerStatus{{Name: "a", State: "blocked", Tools: -1, Error: "broken"}}, &ConfigStatus{
				Blocked: true,
				Errors:  []ConfigProblem{{File: "/h/c.json", Line: 3, Col: 7, Path: "mcpServers.a", Message: "broken"}},
				Ignored: &IgnoredProject{Dir: "/p", Reason: "the project is not trusted", Hint: "review them, then run switchboard trust in /p",
					Files: []IgnoredFile{{Path: "/p/.mcp.json", Servers: []string{"x", "y"}}, {Path: "/p/empty.json"}}},
			}, now),
			text: "configuration errors (no server is usable until they are fixed; hint: switchboard config validate):\n" +
				"  /h/c.json:3:7: mcpServers.a: broken\n" +
				"1 server (0 connected)\n" +
				"a  blocked\n" +
				"ignored project files (the project is not trusted):\n" +
				"  /p/.mcp.json (servers: x, y)\n" +
				"  /p/empty.json (no servers)\n" +
				"hint: review them, then run switchboard trust in /p",
			details: Details{Operation: "status", Count: 1, Servers: []ServerStatus{{Name: "a", State: "blocked", Tools: -1, Error: "broken"}},
				Config: &ConfigStatus{Blocked: true,
					Errors: []ConfigProblem{{File: "/h/c.json", Line: 3, Col: 7, Path: "mcpServers.a", Message: "broken"}},
					Ignored: &IgnoredProject{Dir: "/p", Reason: "the project is not trusted", Hint: "review them, then run switchboard trust in /p",
						Files: []IgnoredFile{{Path: "/p/.mcp.json", Servers: []string{"x", "y"}}, {Path: "/p/empty.json"}}}}},
			spillFor: "status",
		},
		{
			name: "tools, sorted, with the head of the instructions",
			r: Tools("gh", []*mcp.Tool{{Name: "z", Description: "\n  Last one.\nMore."}, {Name: "a", Title: "A"}},
				"\nUse it well.\nDetails."),
			text: "2 tools on \"gh\"\na\nz — Last one.\ninstructions: Use it well.",
			details: Details{Operation: "server", Server: "gh", Count: 2, Tools: []ToolInfo{
				{Server: "gh", Name: "a", Title: "A"}, {Server: "gh", Name: "z", Description: "Last one."}}},
			spillFor: "tools-gh",
		},
		{
			name: "describe",
			r: Describe(ToolRef{Server: "gh", Name: "create"}, &mcp.Tool{Name: "create", Title: "Create", Description: "Makes one.",
				InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &yes}}, false, Agents),
			text: "tool \"create\" on \"gh\" (call as \"gh_create\")\ntitle: Create\nMakes one.\nannotations: read-only, open-world\ninput schema: {\"type\":\"object\"}",
			details: Details{Operation: "describe", Server: "gh", Count: 1, Tool: &ToolDetail{Server: "gh", Name: "create", Title: "Create",
				Description: "Makes one.", InputSchema: map[string]any{"type": "object"}, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &yes}}},
			spillFor: "describe-create",
		},
		{
			name: "call",
			r: Call(ToolRef{Server: "gh", Name: "echo"}, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}, StructuredContent: map[string]any{"n": 1}},
				bound.Converted{Text: "hi"}),
			text:     "hi",
			details:  Details{Operation: "call", Server: "gh", Count: 1, Structured: map[string]any{"n": 1}},
			spillFor: "call-echo",
		},
		{
			name:     "call with no content",
			r:        Call(ToolRef{Server: "gh", Name: "echo"}, &mcp.CallToolResult{}, bound.Converted{}),
			text:     "tool \"echo\" on \"gh\" returned no content",
			details:  Details{Operation: "call", Server: "gh"},
			spillFor: "call-echo",
		},
		{
			name: "call that the tool failed",
			r: Call(ToolRef{Server: "gh", Name: "echo"}, &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no\nway"}}},
				bound.Converted{Text: "no\nway"}),
			text:     "tool \"echo\" on \"gh\" returned an error:\nno\nway",
			details:  Details{Operation: "call", Server: "gh", IsError: true, Error: "no", Count: 1},
			isError:  true,
			spillFor: "call-echo",
		},
		{
			name:     "no instructions",
			r:        Instructions("gh", " \n"),
			text:     "\"gh\" gave no instructions",
			details:  Details{Operation: "instructions", Server: "gh", Count: 1},
			spillFor: "instructions",
		},
		{
			name:     "instructions",
			r:        Instructions("gh", "Be kind."),
			text:     "instructions of \"gh\":\n" + bound.Untrusted(`instructions of "gh"`, "Be kind."),
			details:  Details{Operation: "instructions", Server: "gh", Count: 1},
			spillFor: "instructions",
		},
		{
			name:     "reconnected",
			r:        Reconnected("gh"),
			text:     "reconnected \"gh\"",
			details:  Details{Operation: "reconnect", Server: "gh", Count: 1},
			spillFor: "reconnect",
		},
		{
			name: "resources",
			r: Resources("fs", []*mcp.Resource{{Name: "notes", URI: "file:///n?token=x", MIMEType: "text/plain", Description: "My notes."}},
				[]string{"r1"}, []*mcp.ResourceTemplate{{Name: "file", URITemplate: "file:///{path}"}}, Agents),
			text: "1 resource and 1 template on \"fs\"; read one with {\"operation\": \"resources.read\", \"server\": \"fs\", \"resource\": REF}\n" +
				"r1  notes (text/plain) — My notes.\n" +
				"template file:///{path}  file\n" +
				"a URI made from a template may be read by giving it as \"resource\"",
			details: Details{Operation: "resources.list", Server: "fs", Count: 2,
				Resources: []ResourceInfo{{Ref: "r1", Name: "notes", MIMEType: "text/plain", Description: "My notes.", URI: bound.RedactURI("file:///n?token=x")}},
				Templates: []TemplateInfo{{Name: "file", URITemplate: "file:///{path}"}}},
			spillFor: "resources-fs",
		},
		{
			name:     "an empty resource",
			r:        Read("fs", "r1", nil),
			text:     "resource r1 on \"fs\" is empty",
			details:  Details{Operation: "resources.read", Server: "fs"},
			spillFor: "resource-r1",
		},
		{
			name: "a resource of text and a blob",
			r: Read("fs", "r2", []ResourcePart{{URI: "file:///a", Text: "A"},
				{URI: "file:///b", Blob: &bound.Spill{Path: "/s/b.bin", Reason: "binary resource content"}, Size: 3}}),
			text: bound.Untrusted(`resource file:///a on "fs"`, "A") + "\n" +
				"resource file:///b on \"fs\": binary, 3 bytes, saved to /s/b.bin",
			details: Details{Operation: "resources.read", Server: "fs", Count: 2,
				Spills: []bound.Spill{{Path: "/s/b.bin", Reason: "binary resource content"}}},
			spillFor: "resource-r2",
		},
		{
			name: "prompts",
			r: Prompts("ev", []*mcp.Prompt{{Name: "greet", Description: "Says hi.", Arguments: []*mcp.PromptArgument{
				{Name: "who", Required: true}, {Name: "how", Description: "Tone."}}}}, People),
			text: "1 prompt on \"ev\"; get one with switchboard prompt ev NAME [key=value …]\ngreet(who*, how) — Says hi.\n* required",
			details: Details{Operation: "prompts.list", Server: "ev", Count: 1, Prompts: []PromptInfo{{Name: "greet", Description: "Says hi.",
				Arguments: []PromptArg{{Name: "who", Required: true}, {Name: "how", Description: "Tone."}}}}},
			spillFor: "prompts-ev",
		},
		{
			name: "a prompt",
			r: Prompt("ev", "greet", "Greets.", []PromptMessage{{Role: "user", Content: bound.Converted{Text: "Hi!",
				Spills: []bound.Spill{{Path: "/s/p.bin"}}}}}),
			text:     "prompt \"greet\" on \"ev\": 1 message\n" + bound.Untrusted(`prompt "greet" on "ev"`, "description: Greets.\n[user]\nHi!"),
			details:  Details{Operation: "prompts.get", Server: "ev", Count: 1, Spills: []bound.Spill{{Path: "/s/p.bin"}}},
			spillFor: "prompt-greet",
		},
		{
			name:     "an error",
			r:        ErrorResult(ActionCall, "gh", errors.New("boom\nhint: retry")),
			text:     "boom\nhint: retry",
			details:  Details{Operation: "call", Server: "gh", IsError: true, Error: "boom\nhint: retry"},
			isError:  true,
			spillFor: "error",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.r.Text != tt.text {
				t.Errorf("text:\ngot  %q\nwant %q", tt.r.Text, tt.text)
			}
			if diff := cmp.Diff(tt.details, tt.r.Details); diff != "" {
				t.Errorf("details (-want +got):\n%s", diff)
			}
			if tt.r.IsError != tt.isError {
				t.Errorf("isError = %v, want %v", tt.r.IsError, tt.isError)
			}
			if tt.r.SpillName != tt.spillFor {
				t.Errorf("spill name %q, want %q", tt.r.SpillName, tt.spillFor)
			}
		})
	}
}

func TestSearchRenderer(t *testing.T) {
	hits := []ToolInfo{{Server: "gh", Name: "create_issue", Description: "Creates an issue.\nMore.", Score: 2}, {Server: "gl", Name: "new_issue", Score: 1}}
	tests := []struct {
		name string
		in   Searched
		text string
		info SearchInfo
	}{
		{
			name: "hybrid, one page of several",
			in:   Searched{Query: "issue", Offset: 0, Limit: 2, Servers: []string{"gh", "gl"}, Hits: hits, Total: 5, Hybrid: true},
			text: "5 tools match \"issue\" on 2 servers (hybrid: lexical + semantic); showing 1-2; call with {\"tool\": NAME, \"args\": {…}}\n" +
				"gh_create_issue — Creates an issue.\ngl_new_issue",
			info: SearchInfo{Query: "issue", Mode: "hybrid", Limit: 2, Servers: []string{"gh", "gl"}},
		},
		{
			name: "nothing found, one server failed",
			in: Searched{Query: "zz", Limit: 10, Servers: []string{"gh", "gl"}, Reason: "no endpoint",
				Failed: []ServerError{{Server: "gl", ErrorClass: "start", Error: "exited\n(hint: fix it)"}}},
			text: "no tools match \"zz\" on 1 of 2 servers (1 could not be searched) (gh)\nnote: no endpoint\n" +
				"not searched: \"gl\": exited (hint: fix it)\nhint: try other words, or {\"server\": NAME} to list a server's tools",
			info: SearchInfo{Query: "zz", Mode: "lexical", Reason: "no endpoint", Limit: 10, Servers: []string{"gh", "gl"}, Failed: []string{"gl"}},
		},
		{
			name: "every server failed",
			in:   Searched{Query: "zz", Server: "gl", Regex: true, Servers: []string{"gl"}, Failed: []ServerError{{Server: "gl", Error: "down"}}},
			text: "nothing searched for \"zz\": none of the 1 server could be searched\nnot searched: \"gl\": down",
			info: SearchInfo{Query: "zz", Mode: "regex", Servers: []string{"gl"}, Failed: []string{"gl"}},
		},
		{
			name: "several needs, grouped, with implied helpers and duplicates",
			in: Searched{Query: "file issue; save notes; file issue", Queries: []string{"file issue", "save notes", "file issue"}, Limit: 4,
				Servers: []string{"gh", "fs", "a", "b", "c", "d", "e", "f"}, Total: 9, Hits: []ToolInfo{
					{Server: "gh", Name: "create_issue", Need: "file issue"},
					{Server: "fs", Name: "write_file", Need: "save notes", Also: []string{"a", "b", "c", "d", "e", "f"}},
					{Server: "gh", Name: "list_issues", Need: "file issue"},
					{Server: "fs", Name: "edit_file", Need: "save notes", Implied: "write a file", Also: []string{"a"}},
				}},
			text: "9 tools match 3 needs on 8 servers; showing 1-4; call with {\"tool\": NAME, \"args\": {…}}\n" +
				"need 1: \"file issue\"\ngh_create_issue\ngh_list_issues\n" +
				"need 2: \"save notes\"\nfs_write_file (also on a, b, c, d, e and 1 more)\nfs_edit_file [implied: write a file] (also on a)",
			info: SearchInfo{Query: "file issue; save notes; file issue", Queries: []string{"file issue", "save notes", "file issue"}, Mode: "lexical", Limit: 4,
				Servers: []string{"gh", "fs", "a", "b", "c", "d", "e", "f"}},
		},
		{
			name: "several needs, one without tools on the page",
			in: Searched{Query: "a; b", Queries: []string{"a", "b"}, Offset: 1, Limit: 1, Servers: []string{"gh"}, Total: 3,
				Hits: []ToolInfo{{Server: "gh", Name: "x", Need: "a"}}},
			text: "3 tools match 2 needs on 1 server; showing 2-2; call with {\"tool\": NAME, \"args\": {…}}\n" +
				"need 1: \"a\"\ngh_x\nneed 2: \"b\"\n(no tools for it on this page)",
			info: SearchInfo{Query: "a; b", Queries: []string{"a", "b"}, Mode: "lexical", Offset: 1, Limit: 1, Servers: []string{"gh"}},
		},
		{
			name: "past the last page",
			in:   Searched{Query: "issue", Server: "gh", Offset: 10, Limit: 10, Servers: []string{"gh"}, Total: 3},
			text: "no more tools match \"issue\" on \"gh\": 3 in all, offset 10",
			info: SearchInfo{Query: "issue", Mode: "lexical", Offset: 10, Limit: 10, Servers: []string{"gh"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Search(&tt.in, Agents)
			if r.Text != tt.text {
				t.Errorf("text:\ngot  %q\nwant %q", r.Text, tt.text)
			}
			if diff := cmp.Diff(&tt.info, r.Details.Search); diff != "" {
				t.Errorf("search info (-want +got):\n%s", diff)
			}
			if r.Details.Count != len(tt.in.Hits) || r.Details.Total != tt.in.Total || r.Details.Server != tt.in.Server {
				t.Errorf("count %d, total %d, server %q; want %d, %d, %q", r.Details.Count, r.Details.Total, r.Details.Server, len(tt.in.Hits), tt.in.Total, tt.in.Server)
			}
			if diff := cmp.Diff(tt.in.Failed, r.Details.Failed); diff != "" {
				t.Errorf("failed (-want +got):\n%s", diff)
			}
			for _, h := range r.Details.Tools {
				if strings.Contains(h.Description, "\n") {
					t.Errorf("tool %s: description %q is more than its first line", h.Name, h.Description)
				}
			}
		})
	}
}

func TestUnreachedError(t *testing.T) {
	err := error(&UnreachedError{Name: "mk", Answered: []string{"gh"}, Failed: []ServerError{{Server: "gl", Error: "down"}},
		Suggestions: []ToolRef{{Server: "gh", Name: "make"}}})
	want := "unknown tool \"mk\" on the 1 server that answered (gh), but 1 could not be searched; did you mean: make (gh)\nnot searched: \"gl\": down"
	if err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	if !errors.Is(err, ErrUnknownTool) {
		t.Error("does not match ErrUnknownTool")
	}
	r := ErrorResult(ActionCall, "", err)
	if diff := cmp.Diff([]ServerError{{Server: "gl", Error: "down"}}, r.Details.Failed); diff != "" {
		t.Errorf("details.failed (-want +got):\n%s", diff)
	}
}

func TestPromptArgs(t *testing.T) {
	p := &mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}, {Name: "n"}}}
	tests := []struct {
		given map[string]any
		want  map[string]string
		err   string
	}{
		{map[string]any{"who": "ann", "n": 2.0}, map[string]string{"who": "ann", "n": "2"}, ""},
		{map[string]any{"n": "1"}, nil, `prompt "greet" needs "who" (its arguments: who, n); nothing was requested`},
		{map[string]any{"who": "a", "x": "1"}, nil, `prompt "greet" has no argument "x" (its arguments: who, n); nothing was requested`},
		{map[string]any{"who": []any{}}, nil, `prompt "greet": argument "who" must be a string, not []interface {}`},
	}
	for _, tt := range tests {
		got, err := PromptArgs(p, tt.given)
		switch {
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("PromptArgs(%v) error = %v, want %s", tt.given, err, tt.err)
		case tt.err == "" && (err != nil || !cmp.Equal(got, tt.want)):
			t.Errorf("PromptArgs(%v) = %v, %v; want %v", tt.given, got, err, tt.want)
		}
	}
	if _, err := FindPrompt("ev", "nope", []*mcp.Prompt{p}); err == nil || err.Error() != `unknown prompt "nope" on "ev"; its prompts are: greet` {
		t.Errorf("FindPrompt of an unknown prompt: %v", err)
	}
	if err := CheckPromptSize("ev", "greet", MaxPromptMessages+1); err == nil {
		t.Error("a prompt over the bound passed")
	}
}

func TestDescription(t *testing.T) {
	got := Description([]ServerSummary{{Name: "gh", Known: true, Tools: 1, Instructions: "\nGitHub's API, with a long first line of words.\n"}, {Name: "fs"}})
	want := "Gateway to MCP servers' tools: search by need, describe, then call by name.\n" +
		"Servers: gh (1 tool, GitHub's API, with a long first…); fs.\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("got:\n%s\nwant it to start with:\n%s", got, want)
	}
	if none := Description(nil); !strings.Contains(none, "No servers are configured.") {
		t.Errorf("with no servers:\n%s", none)
	}
	var many []ServerSummary
	for range MaxDescribedServers + 3 {
		many = append(many, ServerSummary{Name: "s"})
	}
	if d := Description(many); !strings.Contains(d, "; and 3 more.") {
		t.Errorf("with %d servers:\n%s", len(many), d)
	}
}
