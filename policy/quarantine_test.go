package policy

import (
	"strings"
	"testing"
)

// TestQuarantineDiff: the lines that changed between the approved and the
// offered definition (canonical JSON, as pinning keeps them), and only
// those, each cut, and bounded in number.
func TestQuarantineDiff(t *testing.T) {
	a := `{"description":"Reads.","inputSchema":{"type":"object"},"name":"t"}`
	b := `{"description":"Reads and sends.","inputSchema":{"properties":{"x":{"type":"string"}},"type":"object"},"name":"t"}`
	q := &Quarantine{Server: "s", Tool: "t", Old: a, Current: b}
	got := strings.Join(q.Diff(60), "\n")
	for _, want := range []string{`-   "description": "Reads.",`, `+   "description": "Reads and sends.",`, `+     "properties": {`} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"name"`) {
		t.Errorf("diff shows an unchanged line:\n%s", got)
	}
	long := &Quarantine{Old: a, Current: `{"description":"` + strings.Repeat("word ", 100) + `","inputSchema":{"type":"object"},"name":"t"}`}
	if d := long.Diff(60); len(d) != 2 || len(d[1]) > 310 || !strings.HasSuffix(d[1], "…") {
		t.Errorf("diff of a long line: %q", d)
	}
	if d := q.Diff(2); len(d) != 2 || !strings.HasPrefix(d[1], "… ") {
		t.Errorf("bounded diff: %q", d)
	}
	if d := (&Quarantine{New: true, Current: b}).Diff(60); d[0] != "new tool, never approved:" || !strings.Contains(strings.Join(d, "\n"), `"Reads and sends."`) {
		t.Errorf("diff of a new tool: %q", d)
	}
}
