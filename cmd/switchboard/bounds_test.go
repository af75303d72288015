package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestBoundScripts runs testdata/bounds/*.txtar: $FIXTURE is the fixture
// server's executable (choose its mode with SWITCHBOARD_TESTSERVER).
func TestBoundScripts(t *testing.T) {
	fixture, _, _ := testserver.Command(testserver.Good)
	testscript.Run(t, scriptParams("testdata/bounds", map[string]string{"FIXTURE": fixture}))
}

// sizedHome writes a configuration with the Sized fixture as server "s"
// (directTools as given) and settings, and returns the environment of a
// switchboard that reads it.
func sizedHome(t *testing.T, server, settings map[string]any) []string {
	t.Helper()
	path, args, env := testserver.Command(testserver.Sized)
	s := map[string]any{"command": path, "args": args, "env": env}
	for k, v := range server {
		s[k] = v
	}
	home := t.TempDir()
	writeConfig(t, home, map[string]any{"mcpServers": map[string]any{"s": s}, "settings": settings})
	return serveEnv(home)
}

// runSwitchboard runs the real switchboard and returns its stdout; a non-zero exit
// fails the test.
func runSwitchboard(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("switchboard", args...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("switchboard %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return string(out)
}

// notePattern matches a line that names a spill file.
var notePattern = regexp.MustCompile(`(?m)^.*(saved to|the whole text is in) /.*$\n?`)

func noteBytes(s string) int {
	n := 0
	for _, m := range notePattern.FindAllString(s, -1) {
		n += len(m)
	}
	return n
}

// spillsBytes is what the spills take of details printed by --json.
func spillsBytes(t *testing.T, js string) int {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatalf("--json printed %q: %v", js, err)
	}
	if d["spills"] == nil {
		return 0
	}
	delete(d, "spills")
	less, _ := json.MarshalIndent(d, "", "  ")
	return len(strings.TrimSuffix(js, "\n")) - len(less)
}

// withoutContent returns what call --json printed less its content
// blocks, which carry the tool's text as the text output does, and that
// text.
func withoutContent(t *testing.T, js string) (details, text string) {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatalf("--json printed %q: %v", js, err)
	}
	blocks, _ := d["content"].([]any)
	for _, b := range blocks {
		text += b.(map[string]any)["text"].(string)
	}
	delete(d, "content")
	less, _ := json.MarshalIndent(d, "", "  ")
	return string(less), text
}

// TestCallBounds runs `switchboard call` at the exact boundary of
// settings.output, text and --json: the text and the details (which --json
// prints, with the content blocks that carry the text) count together, as
// the mcp tool returns both.
func TestCallBounds(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	const limit = 4096
	env := sizedHome(t, nil, map[string]any{"output": map[string]int{"maxBytes": limit, "maxLines": 100}})
	callBoth := func(args ...string) (text, js string) {
		args = append([]string{"call", "sized", "--server", "s"}, args...)
		text = strings.TrimSuffix(runSwitchboard(t, env, args...), "\n")
		js, blocks := withoutContent(t, runSwitchboard(t, env, append(args, "--json")...))
		// Each run spills to files of its own: the notes differ.
		if shown, got := notePattern.ReplaceAllString(text, ""), notePattern.ReplaceAllString(blocks, ""); !strings.HasPrefix(shown, strings.TrimSuffix(got, "\n")) {
			t.Errorf("--json content %.80q… is not the text shown, %.80q…", blocks, text)
		}
		return text, js
	}
	text, js := callBoth("bytes=1", "structured=1000")
	n := limit - (len(text) + len(js) - 1)

	text, js = callBoth(fmt.Sprintf("bytes=%d", n), "structured=1000")
	if len(text)+len(js) != limit || noteBytes(text) != 0 || !strings.Contains(js, `"structured": {`) {
		t.Errorf("at the limit: %d bytes of text and %d of details; want %d together, the structured content kept:\n%s", len(text), len(js), limit, js)
	}
	text, js = callBoth(fmt.Sprintf("bytes=%d", n+1), "structured=1000")
	if strings.Contains(js, `"structured"`) || !strings.Contains(js, `"spills"`) || !strings.Contains(text, "[not shown: structured content of") {
		t.Errorf("one byte over: want the structured content spilled and named:\n%s\n%s", text, js)
	}
	if shown := len(text) + len(js) - noteBytes(text) - spillsBytes(t, js); shown > limit {
		t.Errorf("one byte over: %d bytes besides the notes, over %d", shown, limit)
	}

	// The 2.7 MB file read: 2.7 MB of text, 1.49 MB of structured
	// content.
	text, js = callBoth("bytes=2700000", "structured=1490000")
	for face, out := range map[string]string{"text": text, "--json": js} {
		if shown := len(out) - noteBytes(out) - spillsBytes(t, js)*strings.Count(face, "json"); shown > limit {
			t.Errorf("file read, %s: %d bytes besides the notes, over %d", face, shown, limit)
		}
	}
}

// TestServeBounds runs `switchboard serve` over HTTP with direct tools, and
// over stdio in transparent mode, and checks direct tools at the exact
// boundary, that large results through the mcp tool and direct tools stay
// within the limit, that no output schema is advertised, and that a 9 MiB
// resource is refused with the cap's error.
func TestServeBounds(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	const limit = 8192
	output := map[string]any{"maxBytes": limit, "maxLines": 200}
	connect := func(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	// shown is what a client may show of a result (its text and its
	// structured content as indented JSON) and how much of it is notes.
	shown := func(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (total, notes int, r *mcp.CallToolResult) {
		r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				total += len(tc.Text)
				notes += noteBytes(tc.Text)
			}
		}
		if r.StructuredContent != nil {
			sc, _ := json.MarshalIndent(r.StructuredContent, "", "  ")
			total += len(sc)
			notes += spillsBytes(t, string(sc))
		}
		return total, notes, r
	}
	checkTools := func(t *testing.T, cs *mcp.ClientSession, calls map[string]map[string]any) {
		tools, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tools.Tools {
			if tool.OutputSchema != nil {
				t.Errorf("%s advertises an output schema", tool.Name)
			}
		}
		for name, args := range calls {
			if total, notes, _ := shown(t, cs, name, args); total-notes > limit || notes == 0 {
				t.Errorf("%s: %d bytes, %d of them notes; want spilled and within %d", name, total, notes, limit)
			}
		}
	}
	// atBoundary calls a direct tool whose text and structured content
	// come to exactly the limit, then one byte more.
	atBoundary := func(t *testing.T, cs *mcp.ClientSession, name string) {
		args := func(n int) map[string]any { return map[string]any{"bytes": n, "structured": 1000} }
		one, _, _ := shown(t, cs, name, args(1))
		n := limit - (one - 1)
		if total, notes, r := shown(t, cs, name, args(n)); total != limit || notes != 0 || r.StructuredContent == nil {
			t.Errorf("%s at the limit: %d bytes, %d of notes, structured %v; want %d, none, kept", name, total, notes, r.StructuredContent != nil, limit)
		}
		if total, notes, r := shown(t, cs, name, args(n+1)); total-notes > limit || notes == 0 || r.StructuredContent != nil {
			t.Errorf("%s one byte over: %d bytes, %d of notes, structured %v; want it spilled, within %d", name, total, notes, r.StructuredContent != nil, limit)
		}
	}
	fileRead := map[string]any{"bytes": 2_700_000, "structured": 1_490_000}

	t.Run("http", func(t *testing.T) {
		env := sizedHome(t, map[string]any{"directTools": true}, map[string]any{"output": output})
		url := startServe(t, env, "--http", "127.0.0.1:0")
		cs := connect(t, &mcp.StreamableClientTransport{Endpoint: url})
		atBoundary(t, cs, "s_sized")
		checkTools(t, cs, map[string]map[string]any{
			"s_sized": fileRead,
			"s_typed": {"structured": 2 * limit},
			"mcp":     {"tool": "sized", "server": "s", "args": fileRead},
		})
	})
	t.Run("transparent", func(t *testing.T) {
		env := sizedHome(t, nil, map[string]any{"output": output, "toolPrefix": "none"})
		cmd := exec.Command("switchboard", "serve")
		cmd.Env = env
		cs := connect(t, &mcp.CommandTransport{Command: cmd})
		atBoundary(t, cs, "sized")
		checkTools(t, cs, map[string]map[string]any{"sized": fileRead, "typed": {"structured": 2 * limit}})
		_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: fmt.Sprintf("big://%d", 9<<20)})
		if err == nil || !strings.Contains(err.Error(), "cap of 8 MiB on a resource") {
			t.Errorf("9 MiB resource: %v, want the cap's error", err)
		}
	})
}
