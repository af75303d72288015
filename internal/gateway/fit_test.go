package gateway

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// detailsLen is what the details count against the limits: their
// indented JSON, without the spill files.
func detailsLen(t *testing.T, d proxy.Details) int {
	t.Helper()
	d.Spills = nil
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// measure returns what a model may see of a result through any face (its
// text, its images and its details as indented JSON, the longest form
// any face shows) and how much of it is notes naming spill files: the
// lines of the text that name one, and the details' spills.
func measure(t *testing.T, r *proxy.Result) (total, notes int) {
	t.Helper()
	all, err := json.MarshalIndent(r.Details, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	total = len(r.Text) + len(all)
	for _, img := range r.Images {
		total += len(img.Data)
	}
	notes = len(all) - detailsLen(t, r.Details)
	breaks := strings.Count(r.Text, "\n")
	for _, line := range strings.Split(r.Text, "\n") {
		for _, sp := range r.Details.Spills {
			if strings.Contains(line, sp.Path) {
				notes += len(line)
				if breaks > 0 { // a note is a line, with its line break
					notes, breaks = notes+1, breaks-1
				}
				break
			}
		}
	}
	// The mcp tool's result is smaller still: compact details.
	mcpRes := r.MCP()
	compact, err := json.Marshal(mcpRes.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if len(compact) > len(all) {
		t.Errorf("the mcp tool's structured content (%d bytes) is larger than the details as --json prints them (%d)", len(compact), len(all))
	}
	return total, notes
}

// checkBounded fails unless the result is within limit bytes plus its
// notes.
func checkBounded(t *testing.T, r *proxy.Result, limit int) {
	t.Helper()
	total, notes := measure(t, r)
	if total-notes > limit {
		t.Errorf("%s result: %d bytes, %d of them notes: over the limit of %d by %d", r.Details.Operation, total, notes, limit, total-notes-limit)
	}
}

func sizedEngine(t *testing.T, maxBytes int) *Engine {
	t.Helper()
	mcptest.CheckNoLeaks(t)
	return newEngine(t, map[string]def{"s": fixture(testserver.Sized)}, map[string]any{"output": map[string]int{"maxBytes": maxBytes, "maxLines": 200}})
}

func sizedCall(t *testing.T, e *Engine, args map[string]int) *proxy.Result {
	t.Helper()
	a, _ := json.Marshal(args)
	return must(t, e, fmt.Sprintf(`{"tool":"sized","server":"s","args":%s}`, a))
}

// TestStructuredBoundary calls a tool whose text and structured content
// come to exactly the limit, then one byte more: the whole result passes,
// then the structured content goes to a spill file named in the result.
func TestStructuredBoundary(t *testing.T) {
	const limit = 4096
	e := sizedEngine(t, limit)
	// The text holds the tool's text and, since no text block repeats it,
	// the structured content's JSON; the details hold it again.
	one, _ := measure(t, sizedCall(t, e, map[string]int{"bytes": 1, "structured": 1000}))
	n := limit - (one - 1)
	r := sizedCall(t, e, map[string]int{"bytes": n, "structured": 1000})
	if total, _ := measure(t, r); total != limit || len(r.Details.Spills) != 0 {
		t.Fatalf("at the limit: %d bytes, %d spills; want %d and none", total, len(r.Details.Spills), limit)
	}
	if !reflect.DeepEqual(r.Details.Structured, map[string]any(testserver.Structured(1000))) {
		t.Errorf("at the limit: structured content %v, want it as it came", r.Details.Structured)
	}

	r = sizedCall(t, e, map[string]int{"bytes": n + 1, "structured": 1000})
	checkBounded(t, r, limit)
	if r.Details.Structured != nil || len(r.Details.Spills) != 1 {
		t.Fatalf("one byte over: structured %v, spills %v; want the structured content spilled", r.Details.Structured != nil, r.Details.Spills)
	}
	sp := r.Details.Spills[0]
	wantText(t, r, strings.Repeat("x", n+1), "[not shown: structured content of", "saved to "+sp.Path)
	checkSpilledJSON(t, sp.Path, testserver.Structured(1000))
	if got := r.MCP().StructuredContent.(proxy.Details).Structured; got != nil {
		t.Errorf("the mcp tool's structured content still holds the tool's: %v", got)
	}
}

func checkSpilledJSON(t *testing.T, path string, want any) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("spill file %s: %v, mode %v; want 0600", path, err, st.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	var got any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("spill file %s is not JSON: %v", path, err)
	}
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(got)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("spill file %s holds %.100s…, want %.100s…", path, gotJSON, wantJSON)
	}
}

// TestLargeResultsBounded reproduces the read of a 2.7 MB file (a
// text and structured content that repeats it) and other shapes that used
// to slip past the bound: every result stays within the limit plus its
// notes, through Handle, and the spill files hold the whole. A result's
// text and structured content go to one file, the text's, which holds the
// structured content too (issue 30: a file read was spilled as the text,
// then its JSON, then the same JSON again).
func TestLargeResultsBounded(t *testing.T) {
	const limit = 8192
	e := sizedEngine(t, limit)
	for _, tt := range []struct {
		name   string
		args   map[string]int
		spills int
	}{
		{"file read", map[string]int{"bytes": 2_700_000, "structured": 1_490_000}, 1},
		{"structured only", map[string]int{"structured": 20_000}, 1},
		{"structured fits with a text preview", map[string]int{"bytes": 100_000, "structured": 500}, 1},
		{"image and structured", map[string]int{"bytes": 10, "image": 6000, "structured": 3000}, 1},
		{"images over", map[string]int{"bytes": 10, "image": 9000}, 1},
		{"many lines", map[string]int{"lines": 5000, "structured": 10}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := sizedCall(t, e, tt.args)
			checkBounded(t, r, limit)
			if len(r.Details.Spills) != tt.spills {
				t.Errorf("%d spills, want %d: %+v", len(r.Details.Spills), tt.spills, r.Details.Spills)
			}
			for _, sp := range r.Details.Spills {
				if _, err := os.Stat(sp.Path); err != nil || !strings.Contains(r.Text, sp.Path) {
					t.Errorf("spill %s: %v; named in the text: %v", sp.Path, err, strings.Contains(r.Text, sp.Path))
				}
			}
			if n := tt.args["structured"]; n > 0 && r.Details.Structured == nil {
				y := strings.Repeat("y", n)
				found := false
				for _, sp := range r.Details.Spills {
					data, _ := os.ReadFile(sp.Path)
					found = found || strings.Contains(string(data), y)
				}
				if !found {
					t.Errorf("structured content not shown, and no spill file holds it")
				}
			}
		})
	}
}

// TestDetailsBounded lists a server's tools with a limit that the text
// meets but the text and the details' listing together do not: the
// listing goes to a spill file, the text stays whole.
func TestDetailsBounded(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	e := newEngine(t, map[string]def{"c": fixture(testserver.Catalog)}, map[string]any{"output": map[string]int{"maxBytes": 1024}})
	r := must(t, e, `{"server":"c"}`)
	checkBounded(t, r, 1024)
	if r.Details.Tools != nil || r.Details.Count != len(testserver.CatalogTools) || len(r.Details.Spills) != 1 {
		t.Fatalf("details: %d tools, count %d, spills %v; want the listing spilled and the count kept", len(r.Details.Tools), r.Details.Count, r.Details.Spills)
	}
	wantText(t, r, "9 tools on \"c\"", "get_forecast", "[structured details not shown: ", r.Details.Spills[0].Path)
	data, _ := os.ReadFile(r.Details.Spills[0].Path)
	var d proxy.Details
	if err := json.Unmarshal(data, &d); err != nil || len(d.Tools) != len(testserver.CatalogTools) {
		t.Errorf("details spill: %d tools (%v), want %d", len(d.Tools), err, len(testserver.CatalogTools))
	}
}

// TestReadCapThroughEngine reads a 9 MiB resource and gets a 9 MiB prompt
// through the mcp tool and the library's pass-through methods: each is an
// error that names the cap, and nothing is spilled. A 7 MiB resource is
// read, and bounded.
func TestReadCapThroughEngine(t *testing.T) {
	const limit = 8192
	e := sizedEngine(t, limit)
	must(t, e, `{"server":"s"}`) // indexes the server: its template is known
	nine := fmt.Sprint(9 << 20)
	for _, req := range []string{
		`{"operation":"resources.read","server":"s","resource":"big://` + nine + `"}`,
		`{"operation":"prompts.get","server":"s","prompt":"big","args":{"bytes":"` + nine + `"}}`,
	} {
		r := handle(t, e, req)
		if !r.IsError || !strings.Contains(r.Text, "over switchboard's cap of 8 MiB") || !strings.Contains(r.Details.Error, "cap of 8 MiB") {
			t.Errorf("%s: error %v, text %.300q; want an error naming the cap", req, r.IsError, r.Text)
		}
		checkBounded(t, r, limit)
	}
	if _, err := e.ReadResource(t.Context(), "s", "big://"+nine); err == nil || !strings.Contains(err.Error(), "cap of 8 MiB on a resource") {
		t.Errorf("Engine.ReadResource: %v, want the cap's error", err)
	}
	if _, err := e.GetPrompt(t.Context(), "s", "big", map[string]string{"bytes": nine}); err == nil || !strings.Contains(err.Error(), "cap of 8 MiB on a prompt") {
		t.Errorf("Engine.GetPrompt: %v, want the cap's error", err)
	}
	if dir := e.spill.Dir(); dir != "" {
		t.Errorf("refusals spilled into %s", dir)
	}

	r := must(t, e, fmt.Sprintf(`{"operation":"resources.read","server":"s","resource":"big://%d"}`, 7<<20))
	checkBounded(t, r, limit)
	if len(r.Details.Spills) != 1 || r.Details.Spills[0].Bytes < 7<<20 {
		t.Errorf("7 MiB resource: spills %+v, want the whole text in one", r.Details.Spills)
	}
}
