package front

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

func sized() def {
	path, args, env := testserver.Command(testserver.Sized)
	return def{"command": path, "args": args, "env": env}
}

// spillNote matches a line of a result that names a spill file.
var spillNote = regexp.MustCompile(`(?m)^.*(saved to|the whole text is in) /.*$\n?`)

// shown returns what a client may show a model of a tool result: its text,
// its images and its structured content as indented JSON (the longest form
// of it), and how much of that is notes naming spill files.
func shown(t *testing.T, r *mcp.CallToolResult) (total, notes int) {
	t.Helper()
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			total += len(c.Text)
			for _, n := range spillNote.FindAllString(c.Text, -1) {
				notes += len(n)
			}
		case *mcp.ImageContent:
			total += len(c.Data)
		default:
			t.Fatalf("content of type %T", c)
		}
	}
	if r.StructuredContent != nil {
		js, err := json.MarshalIndent(r.StructuredContent, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		total += len(js)
		var d struct{ Spills json.RawMessage }
		if json.Unmarshal(js, &d) == nil && d.Spills != nil {
			// The mcp tool's details name their spill files too.
			var all map[string]any
			json.Unmarshal(js, &all)
			delete(all, "spills")
			less, _ := json.MarshalIndent(all, "", "  ")
			notes += len(js) - len(less)
		}
	}
	return total, notes
}

// checkAtBoundary calls a tool (through callWith, which takes the size of
// its text) whose text and structured content come to exactly limit, then
// one byte more: the first is shown whole, the second has its structured
// content spilled and stays within the limit plus its notes.
func checkAtBoundary(t *testing.T, limit int, callWith func(n int) *mcp.CallToolResult, structured func(*mcp.CallToolResult) any) {
	t.Helper()
	one, _ := shown(t, callWith(1))
	n := limit - (one - 1)
	r := callWith(n)
	if total, notes := shown(t, r); total != limit || notes != 0 || structured(r) == nil {
		t.Fatalf("at the limit: %d bytes, %d of notes, structured %v; want %d, none, kept", total, notes, structured(r) != nil, limit)
	}
	r = callWith(n + 1)
	total, notes := shown(t, r)
	if structured(r) != nil || notes == 0 || !strings.Contains(text(r), "[not shown: structured content") {
		t.Errorf("one byte over: structured %v, notes %d; want the structured content spilled:\n%.400s", structured(r) != nil, notes, text(r))
	}
	if total-notes > limit {
		t.Errorf("one byte over: %d bytes, %d of notes: over %d", total, notes, limit)
	}
}

// TestDirectToolBounds checks direct tools and the mcp tool's call at the
// exact boundary of settings.output, and that direct tools do not
// advertise an output schema they could not honour.
func TestDirectToolBounds(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	const limit = 4096
	s := sized()
	s["directTools"] = true
	g := newGateway(t, map[string]def{"s": s}, map[string]any{"output": map[string]int{"maxBytes": limit, "maxLines": 100}})
	cs := g.connect(t, nil)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.OutputSchema != nil {
			t.Errorf("%s advertises an output schema: %v", tool.Name, tool.OutputSchema)
		}
	}

	t.Run("direct", func(t *testing.T) {
		checkAtBoundary(t, limit, func(n int) *mcp.CallToolResult {
			return call(t, cs, "s_sized", map[string]any{"bytes": n, "structured": 1000})
		}, func(r *mcp.CallToolResult) any { return r.StructuredContent })
	})
	t.Run("mcp", func(t *testing.T) {
		checkAtBoundary(t, limit, func(n int) *mcp.CallToolResult {
			return call(t, cs, "mcp", map[string]any{"tool": "sized", "server": "s", "args": map[string]any{"bytes": n, "structured": 1000}})
		}, func(r *mcp.CallToolResult) any { return r.StructuredContent.(map[string]any)["structured"] })
	})
	t.Run("typed", func(t *testing.T) {
		r := call(t, cs, "s_typed", map[string]any{"structured": 10 * limit})
		if total, notes := shown(t, r); r.IsError || r.StructuredContent != nil || total-notes > limit {
			t.Errorf("typed over the limit: error %v, structured %v, %d bytes with %d of notes", r.IsError, r.StructuredContent != nil, total, notes)
		}
	})
	t.Run("file read", func(t *testing.T) {
		for _, name := range []string{"s_sized", "mcp"} {
			args := map[string]any{"bytes": 2_700_000, "structured": 1_490_000}
			if name == "mcp" {
				args = map[string]any{"tool": "sized", "server": "s", "args": args}
			}
			r := call(t, cs, name, args)
			if total, notes := shown(t, r); total-notes > limit {
				t.Errorf("%s: %d bytes, %d of notes: over %d", name, total, notes, limit)
			}
		}
	})
}

// TestTransparentBounds checks transparent mode: a result within the
// limits passes as it came, a larger one is bounded like a direct tool's,
// no output schema is advertised, and a resource or prompt over 8 MiB is
// refused with an error that names the cap.
func TestTransparentBounds(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	const limit = 4096
	g := newGateway(t, map[string]def{"s": sized()}, map[string]any{"toolPrefix": "none", "output": map[string]int{"maxBytes": limit, "maxLines": 100}})
	cs := g.connect(t, nil)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.OutputSchema != nil {
			t.Errorf("%s advertises an output schema: %v", tool.Name, tool.OutputSchema)
		}
	}

	r := call(t, cs, "typed", map[string]any{"structured": 100})
	js, _ := json.Marshal(testserver.Structured(100))
	if text(r) != string(js) || r.StructuredContent == nil {
		t.Errorf("typed within the limits: text %q, structured %v; want them as they came", text(r), r.StructuredContent)
	}
	r = call(t, cs, "sized", map[string]any{"bytes": 10, "image": 100})
	if len(r.Content) != 2 || text(r) != strings.Repeat("x", 10) {
		t.Errorf("text and image within the limits: %d blocks, text %q; want them as they came", len(r.Content), text(r))
	}
	r = call(t, cs, "sized", map[string]any{"bytes": 10, "structured": 100})
	if !strings.Contains(text(r), "structured content:\n") || r.StructuredContent == nil {
		t.Errorf("structured content no text repeats: text %q; want its JSON added to the text", text(r))
	}
	checkAtBoundary(t, limit, func(n int) *mcp.CallToolResult {
		return call(t, cs, "sized", map[string]any{"bytes": n, "structured": 1000})
	}, func(r *mcp.CallToolResult) any { return r.StructuredContent })

	nine := 9 << 20
	_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: fmt.Sprintf("big://%d", nine)})
	if err == nil || !strings.Contains(err.Error(), "cap of 8 MiB on a resource") {
		t.Errorf("9 MiB resource: %v, want the cap's error", err)
	}
	_, err = cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "big", Arguments: map[string]string{"bytes": fmt.Sprint(nine)}})
	if err == nil || !strings.Contains(err.Error(), "cap of 8 MiB on a prompt") {
		t.Errorf("9 MiB prompt: %v, want the cap's error", err)
	}
	if res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "big://100"}); err != nil || len(res.Contents[0].Text) != 100 {
		t.Errorf("a small resource after the refusal: %v", err)
	}
}
