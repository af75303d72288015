package front

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// An observer keeps what a gateway shows of the calls it serves, besides
// their answers: the engine's reports of the calls it sent (Options.OnCall),
// the front's log line of each call, its metrics of calls and the audit
// trail. What cannot be the same from one gateway to another is masked:
// times, durations, session ids, spill files, its home directory.
//
// Two gateways that served the same calls, one through the fast lane and
// one through go-sdk's handlers, show the same: both doors run one
// pipeline (pipeline.go), and a promise kept by one door only would show
// here (TestFastLaneSameAnswers, TestFastLaneProxyTool).
type observer struct {
	g *testGateway

	mu    sync.Mutex
	calls []string // Options.OnCall's records, Start and Duration masked
	logs  []string // the front's "call" log lines, client and ms masked
	audit int      // lines of the audit trail taken so far
}

// newWatched is newGateway with an observer (testGateway.seen) and the
// audit trail's payloads on, so that the arguments and results the engine
// records are compared too.
func newWatched(t testing.TB, servers map[string]def, settings map[string]any) *testGateway {
	t.Helper()
	o := &observer{}
	cp := map[string]any{"audit": map[string]any{"payloads": true}}
	for k, v := range settings {
		cp[k] = v
	}
	opts := Options{Logger: slog.New(o), Engine: switchboard.Options{OnCall: o.onCall}}
	g := newGatewayWith(t, servers, cp, opts)
	o.g, g.seen = g, o
	return g
}

func (o *observer) onCall(c proxy.CallRecord) {
	c.Start, c.Duration = time.Time{}, 0
	b, _ := json.Marshal(c)
	o.mu.Lock()
	o.calls = append(o.calls, string(b))
	o.mu.Unlock()
}

// The observer is the gateway's slog.Handler: it keeps the call lines.
func (o *observer) Enabled(context.Context, slog.Level) bool { return true }
func (o *observer) WithAttrs([]slog.Attr) slog.Handler       { return o }
func (o *observer) WithGroup(string) slog.Handler            { return o }

func (o *observer) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "call" {
		return nil
	}
	var b strings.Builder
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "client", "ms":
			fmt.Fprintf(&b, "%s=* ", a.Key)
		default:
			fmt.Fprintf(&b, "%s=%v ", a.Key, a.Value)
		}
		return true
	})
	o.mu.Lock()
	o.logs = append(o.logs, b.String())
	o.mu.Unlock()
	return nil
}

// volatile are the audit trail's fields that differ from run to run.
var volatile = regexp.MustCompile(`"(time|session|durationMs)":("[^"]*"|[0-9.e-]+)`)

// take returns what the gateway showed since the last take: the call
// reports, log lines and audit records, each masked and sorted (a log line
// may come before or after its call's report), and its call metrics so far.
func (o *observer) take(t *testing.T) string {
	t.Helper()
	o.mu.Lock()
	calls, logs := o.calls, o.logs
	o.calls, o.logs = nil, nil
	o.mu.Unlock()
	audit := o.auditLines(t)
	spill := regexp.MustCompile(regexp.QuoteMeta(o.g.srv.opts.Engine.SpillDir) + `/p[0-9]+-[0-9]+`)
	for i, l := range audit {
		audit[i] = strings.ReplaceAll(spill.ReplaceAllString(volatile.ReplaceAllString(l, `"$1":*`), "SPILL"), o.g.home, "HOME")
	}
	var b strings.Builder
	for _, part := range []struct {
		name  string
		lines []string
	}{{"OnCall", calls}, {"log", logs}, {"audit", audit}, {"metrics", o.metrics()}} {
		sort.Strings(part.lines)
		fmt.Fprintf(&b, "%s:\n\t%s\n", part.name, strings.Join(part.lines, "\n\t"))
	}
	return b.String()
}

// auditLines returns the audit records written since the last call.
func (o *observer) auditLines(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(config.Dirs{Home: o.g.home}.StateDir(), "audit.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 0; sc.Scan(); n++ {
		if n >= o.audit {
			lines = append(lines, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	o.audit += len(lines)
	return lines
}

// metrics returns the calls and errors counted, by kind and server.
func (o *observer) metrics() []string {
	m := o.g.srv.opts.Metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k, s := range m.calls {
		out = append(out, fmt.Sprintf("%s %s calls=%d errors=%d", k.kind, k.server, s.calls, s.errors))
	}
	slices.Sort(out)
	return out
}

// TestFastLaneSameApproval makes calls an approval rule covers through two
// gateways in proxy mode over HTTP, one with the fast lane and one
// without, from a client that cannot be asked (it declared no
// elicitation): each call is denied with a result that says why and how
// else to have it approved, nothing reaches the server, and the two
// gateways show the same of it (the audit trail's approval and call
// records, call reports, log lines, metrics). The lane takes the mcp
// tool's calls, and leaves a direct tool's to go-sdk: the engine declines
// a call under an approval rule on the lane (gateway.Session.CallToolRaw).
func TestFastLaneSameApproval(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	fx := fixture()
	fx["approve"] = []string{"rec*"}
	fx["directTools"] = []string{"record", "echo"}
	settings := map[string]any{"toolPrefix": "server"}
	fast := newWatched(t, map[string]def{"fx": fx}, settings)
	slow := newWatched(t, map[string]def{"fx": fx}, settings)
	fcs, _ := fast.connectHTTPAt(t, HTTPOptions{}, nil, "2025-11-25")
	scs, _ := slow.connectHTTPAt(t, HTTPOptions{NoFastLane: true}, nil, "2025-11-25")
	file := filepath.Join(t.TempDir(), "calls")
	record := map[string]any{"file": file, "then": ""}
	echo := map[string]any{"text": "hi"}
	cases := []laneCase{
		{"the mcp tool, a call the rule covers", &mcp.CallToolParams{Name: proxy.ToolName, Arguments: map[string]any{"tool": "record", "server": "fx", "args": record}}, true},
		{"a direct tool the rule covers", &mcp.CallToolParams{Name: "fx_record", Arguments: record}, false},
		{"the mcp tool, a call the rule does not cover", &mcp.CallToolParams{Name: proxy.ToolName, Arguments: map[string]any{"tool": "echo", "server": "fx", "args": echo}}, true},
		{"a direct tool the rule does not cover", &mcp.CallToolParams{Name: "fx_echo", Arguments: echo}, false},
	}
	answers := sameOnLane(t, fast, slow, fcs, scs, cases)
	for i, c := range cases[:2] {
		if !strings.Contains(answers[i], `"isError":true`) || !strings.Contains(answers[i], "not approved") || !strings.Contains(answers[i], "did not declare elicitation") {
			t.Errorf("%s: answered %s, want denied, saying why", c.what, answers[i])
		}
	}
	for i, c := range cases[2:] {
		if strings.Contains(answers[2+i], `"isError":true`) {
			t.Errorf("%s: answered %s, want called", c.what, answers[2+i])
		}
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("a call no one approved reached the server")
	}
}
