package front

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestTraceFile: with settings.trace, a client session's file holds its
// client, each call (the mcp tool's operation, a direct tool) and its end,
// and nothing that was sent or answered; past maxEvents, one line says the
// rest was dropped.
func TestTraceFile(t *testing.T) {
	const canary = "canary-7f3a-argument"
	for _, tc := range []struct {
		name      string
		maxEvents int
		want      []string // each line's event, operation or tool
	}{
		{"whole", 0, []string{"session", "call mcp search", "call direct fx echo", "end"}},
		{"bounded", 3, []string{"session", "call mcp search", "dropped"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mcptest.CheckNoLeaks(t)
			dir := t.TempDir()
			trace := map[string]any{"dir": dir}
			if tc.maxEvents > 0 {
				trace["maxEvents"] = tc.maxEvents
			}
			fx := fixture()
			fx["directTools"] = []string{"echo"}
			g := newGateway(t, map[string]def{"fx": fx}, map[string]any{"trace": trace})
			cs := g.connect(t, nil)
			call(t, cs, "mcp", map[string]any{"search": canary})
			if r := call(t, cs, "fx_echo", map[string]any{"text": canary}); text(r) != canary {
				t.Fatalf("fx_echo: %q", text(r))
			}
			cs.Close()
			g.srv.Close() // ends the sessions and waits for their watchers
			files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
			if len(files) != 1 {
				t.Fatalf("trace files %v, want one", files)
			}
			info, _ := os.Stat(files[0])
			if info.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600", info.Mode().Perm())
			}
			data, _ := os.ReadFile(files[0])
			if strings.Contains(string(data), canary) {
				t.Errorf("the trace holds what was sent or answered:\n%s", data)
			}
			var got []string
			sc := bufio.NewScanner(strings.NewReader(string(data)))
			for sc.Scan() {
				var ev traceEvent
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Time == "" {
					t.Fatalf("line %q: %v", sc.Text(), err)
				}
				line := strings.Join(strings.Fields(strings.Join([]string{ev.Event, ev.Via, ev.Operation}, " ")), " ")
				if ev.Via == "direct" {
					line = strings.Join([]string{ev.Event, ev.Via, ev.Server, ev.Tool}, " ")
				}
				if ev.Event == "session" && !strings.Contains(ev.Client, "test-client") {
					t.Errorf("session line names client %q", ev.Client)
				}
				got = append(got, line)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("events %q, want %q", got, tc.want)
			}
		})
	}
}
