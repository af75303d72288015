package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// TestCallsOnFastPath makes each call twice through the engine, once as
// it is and once with a progress token, which only go-sdk's client sends
// (the pool's fast path takes calls without _meta), and checks that the
// answers are the same and that the first went on the fast path: through
// Handle (the mcp tool) and Do (the CLI, the library).
func TestCallsOnFastPath(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	hang := fixture(testserver.Good)
	// The hang tool never answers; the bound also covers h's start and
	// listing on a busy machine.
	hang["requestTimeoutMs"] = 1500
	e := newEngine(t, map[string]def{"f": fixture(testserver.Good), "h": hang}, map[string]any{"output": map[string]int{"maxBytes": 2000, "maxLines": 50}})
	file := filepath.Join(t.TempDir(), "calls")
	must(t, e, `{"server":"f"}`) // the catalog knows the tools: none has an output schema
	must(t, e, `{"server":"h"}`)
	spill := regexp.MustCompile(regexp.QuoteMeta(e.opts.SpillDir) + `[^ "\n]*`)
	cases := []struct {
		what string
		req  string
		fast bool
	}{
		{"text", `{"tool":"echo","server":"f","args":{"text":"hello"}}`, true},
		{"escapes and lines", `{"tool":"echo","server":"f","args":{"text":"a\nb é <&> \"q\" \\ \u2028 \ud83d\ude00"}}`, true},
		{"no arguments", `{"tool":"pid","server":"f"}`, true},
		{"over the bound", `{"tool":"big","server":"f","args":{"bytes":5000}}`, true},
		{"a tool error", `{"tool":"record","server":"f","args":{"file":` + quote(file) + `,"then":"fail"}}`, true},
		{"arguments the server refuses", `{"tool":"echo","server":"f","args":{"text":5}}`, true},
		{"an unknown tool", `{"tool":"nope","server":"f"}`, false},
		{"no answer in time", `{"tool":"hang","server":"h"}`, true},
		{"a server that exits mid-call", `{"tool":"crash","server":"h"}`, true},
	}
	for _, face := range []string{"Handle", "Do"} {
		for _, c := range cases {
			run := func(ctx context.Context) string {
				var r *proxy.Result
				if face == "Handle" {
					r = e.Handle(ctx, json.RawMessage(c.req))
				} else {
					req, err := proxy.Parse(json.RawMessage(c.req))
					if err != nil {
						t.Fatal(err)
					}
					r = e.Do(ctx, req)
				}
				d, _ := json.Marshal(r.Details)
				out := fmt.Sprintf("error=%v\n%s\n%s", r.IsError, r.Text, d)
				// pid answers the server's pid, the same both times; spill
				// files are new each time.
				return spill.ReplaceAllString(out, "SPILL")
			}
			before := e.pool.FastCalls()
			got := run(t.Context())
			fast := e.pool.FastCalls() > before
			mid := e.pool.FastCalls()
			want := run(WithProgressToken(t.Context(), "tok"))
			if e.pool.FastCalls() != mid {
				t.Errorf("%s %s: a call with a progress token went on the fast path", face, c.what)
			}
			if got != want {
				t.Errorf("%s %s: on the fast path\n%s\nthe usual way\n%s", face, c.what, got, want)
			}
			if fast != c.fast {
				t.Errorf("%s %s: on the fast path: %v, want %v (%s)", face, c.what, fast, c.fast, got)
			}
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 4 {
		t.Errorf("the server recorded %d calls, want 4: each face, each way, once", n)
	}
}
