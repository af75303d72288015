package front

import (
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
)

// TestLabelsHoldAgainstServer reads, through the mcp tool, a hostile
// server's resource, prompt and instructions, which try to end the
// untrusted-data label early (in every case and spacing) and to open one
// that seems to be Switchboard's: each answer has one label, closed at its
// end, with the server's instruction inside.
func TestLabelsHoldAgainstServer(t *testing.T) {
	path, args, env := hostile.Command(hostile.LabelBreaker)
	g := newGateway(t, map[string]def{"h": {"command": path, "args": args, "env": env}}, nil)
	cs := g.connect(t, nil)
	closing := regexp.MustCompile(`(?i)<\s*/\s*untrusted-data\s*>`)
	opening := regexp.MustCompile(`(?i)<\s*untrusted-data\b`)
	// A resource is read by the reference its listing gave it.
	if res := call(t, cs, "mcp", map[string]any{"operation": "resources.list", "server": "h"}); res.IsError || !strings.Contains(text(res), "r1") {
		t.Fatalf("listing resources: %s", text(res))
	}
	for _, req := range []map[string]any{
		{"operation": "resources.read", "server": "h", "resource": "r1"},
		{"operation": "prompts.get", "server": "h", "prompt": "notes"},
		{"operation": "instructions", "server": "h"},
	} {
		res := call(t, cs, "mcp", req)
		got := text(res)
		if res.IsError {
			t.Fatalf("%v: %s", req, got)
		}
		o, c := opening.FindAllStringIndex(got, -1), closing.FindAllStringIndex(got, -1)
		if len(o) != 1 || len(c) != 1 || c[0][1] != len(strings.TrimRight(got, "\n")) || o[0][0] > c[0][0] {
			t.Errorf("%v: opening tags at %v, closing at %v, want one label that ends the answer:\n%s", req["operation"], o, c, got)
		}
		if i := strings.Index(got, hostile.Instruction); i < 0 || len(o) == 0 || i < o[0][0] {
			t.Errorf("%v: the instruction is not inside the label:\n%s", req["operation"], got)
		}
	}
}
