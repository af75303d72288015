package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/catalog"
	"github.com/switchboard-mcp/switchboard/config"
)

func tool(name, desc string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object"}}
}

// apply stores what a reconciliation writes, as the catalog does.
func apply(stored map[string]catalog.Pin, r Reconciled) map[string]catalog.Pin {
	out := map[string]catalog.Pin{}
	for k, v := range stored {
		out[k] = v
	}
	for _, p := range r.Write {
		out[p.Tool] = p
	}
	return out
}

func TestDefinitionIgnoresKeyOrder(t *testing.T) {
	a := &mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"b": 1, "a": 2}}}
	b := &mcp.Tool{Name: "t", InputSchema: map[string]any{"properties": map[string]any{"a": 2, "b": 1}, "type": "object"}}
	ha, _ := Definition(a)
	hb, _ := Definition(b)
	hc, _ := Definition(&mcp.Tool{Name: "t", Description: "x", InputSchema: a.InputSchema})
	if ha != hb || ha == hc {
		t.Errorf("hashes %s %s %s: want key order ignored and the description counted", ha, hb, hc)
	}
	ro, _ := Definition(&mcp.Tool{Name: "t", InputSchema: a.InputSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}})
	if ro == ha {
		t.Error("annotations do not count")
	}
}

func TestReconcile(t *testing.T) {
	now := time.Unix(1000, 0)
	// The first listing pins everything, quarantines nothing.
	r := Reconcile("s", nil, Definitions([]*mcp.Tool{tool("a", "A"), tool("b", "B")}), config.PinOn, now)
	if len(r.Write) != 2 || r.Quarantined != nil || r.Events != nil {
		t.Fatalf("first listing: %+v", r)
	}
	stored := apply(nil, r)
	// The same tools: nothing to do.
	if r := Reconcile("s", stored, Definitions([]*mcp.Tool{tool("a", "A"), tool("b", "B")}), config.PinOn, now); r.Write != nil || r.Quarantined != nil {
		t.Errorf("same tools: %+v", r)
	}
	// a changes: quarantined, one event.
	r = Reconcile("s", stored, Definitions([]*mcp.Tool{tool("a", "A2"), tool("b", "B")}), config.PinOn, now)
	if q := r.Quarantined["a"]; q == nil || len(r.Quarantined) != 1 || len(r.Events) != 1 || r.Events[0].Event != EventQuarantine {
		t.Fatalf("changed: %+v", r)
	}
	stored = apply(stored, r)
	// a changes again, and again: still quarantined, no more events.
	for _, d := range []string{"A3", "A4"} {
		r = Reconcile("s", stored, Definitions([]*mcp.Tool{tool("a", d), tool("b", "B")}), config.PinOn, now.Add(time.Hour))
		if r.Quarantined["a"] == nil || len(r.Events) != 0 || !r.Quarantined["a"].Since.Equal(now) {
			t.Errorf("flooding %s: %+v", d, r)
		}
		stored = apply(stored, r)
	}
	if !strings.Contains(stored["a"].PendingDef, "A4") {
		t.Errorf("the pending definition is not the last one: %s", stored["a"].PendingDef)
	}
	// Back to the accepted one: released.
	r = Reconcile("s", stored, Definitions([]*mcp.Tool{tool("a", "A"), tool("b", "B")}), config.PinOn, now)
	if r.Quarantined != nil || len(r.Write) != 1 || r.Write[0].Pending != "" {
		t.Errorf("reverted: %+v", r)
	}
	stored = apply(stored, r)
	// A new tool: pinned and reported; under strict, quarantined.
	r = Reconcile("s", stored, Definitions([]*mcp.Tool{tool("a", "A"), tool("c", "C")}), config.PinOn, now)
	if r.Quarantined != nil || len(r.Events) != 1 || r.Events[0].Event != EventNewTool {
		t.Errorf("new tool: %+v", r)
	}
	r = Reconcile("s", stored, Definitions([]*mcp.Tool{tool("a", "A"), tool("c", "C")}), config.PinStrict, now)
	if q := r.Quarantined["c"]; q == nil || !q.New || r.Events[0].Event != EventQuarantine {
		t.Errorf("new tool, strict: %+v", r)
	}
	// Off: nothing.
	if r := Reconcile("s", stored, Definitions([]*mcp.Tool{tool("a", "Z")}), config.PinOff, now); r.Write != nil || r.Quarantined != nil {
		t.Errorf("off: %+v", r)
	}
}

// TestReconcileBoundsEvents: thousands of tools changing at once make a
// bounded number of audit records.
func TestReconcileBoundsEvents(t *testing.T) {
	var v1, v2 []*mcp.Tool
	for i := range 5000 {
		v1 = append(v1, tool(fmt.Sprint("t", i), "one"))
		v2 = append(v2, tool(fmt.Sprint("t", i), "two"))
	}
	now := time.Now()
	stored := apply(nil, Reconcile("s", nil, Definitions(v1), config.PinOn, now))
	r := Reconcile("s", stored, Definitions(v2), config.PinOn, now)
	if len(r.Quarantined) != 5000 || len(r.Events) != maxPinEvents+1 || !strings.Contains(r.Events[maxPinEvents].Why, "4980 more") {
		t.Errorf("%d quarantined, %d events (last %+v)", len(r.Quarantined), len(r.Events), r.Events[len(r.Events)-1])
	}
}

func TestDiff(t *testing.T) {
	_, a := Definition(tool("t", "Reads."))
	_, b := Definition(&mcp.Tool{Name: "t", Description: "Reads and sends.", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}}}})
	got := strings.Join(Diff(a, b, 60), "\n")
	for _, want := range []string{`-   "description": "Reads.",`, `+   "description": "Reads and sends.",`, `+     "properties": {`} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"name"`) {
		t.Errorf("diff shows an unchanged line:\n%s", got)
	}
	long := strings.Repeat("word ", 100)
	_, c := Definition(tool("t", long))
	if d := Diff(a, c, 60); len(d) != 2 || len(d[1]) > 310 || !strings.HasSuffix(d[1], "…") {
		t.Errorf("diff of a long line: %q", d)
	}
	if d := Diff(a, b, 2); len(d) != 2 || !strings.HasPrefix(d[1], "… ") {
		t.Errorf("bounded diff: %q", d)
	}
}
