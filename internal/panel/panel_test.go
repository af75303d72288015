package panel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	teatest "github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/front"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// The panel's tests drive the real model in a real bubbletea program
// (teatest) over a real engine: a go-sdk server over Streamable HTTP
// (httptest), a stdio server whose command does not exist, and a disabled
// one. Screens are compared with golden files in testdata (go test
// -update rewrites them) at fixed sizes, without colour; what varies from
// run to run (ages, the temporary directory) is normalised first.

type sumArgs struct {
	A float64 `json:"a" jsonschema:"the first number"`
	B float64 `json:"b" jsonschema:"the second number"`
}

type echoArgs struct {
	Text string `json:"text" jsonschema:"what to say back"`
}

type bigArgs struct {
	Bytes int `json:"bytes" jsonschema:"how many bytes"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// calcServer serves tools over Streamable HTTP.
func calcServer(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1"}, &mcp.ServerOptions{Instructions: "Arithmetic and echoes."})
	mcp.AddTool(s, &mcp.Tool{Name: "get-sum", Title: "Get Sum", Description: "Returns the sum of two numbers",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a sumArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprintf("The sum of %v and %v is %v.", a.A, a.B, a.A+a.B)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text back"},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return text(a.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Answers with many lines of text"},
		func(_ context.Context, _ *mcp.CallToolRequest, a bigArgs) (*mcp.CallToolResult, any, error) {
			return text(strings.Repeat("line of output\n", a.Bytes/15)), nil, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

type fixture struct {
	home  string
	local *Local
	log   *switchboard.CallLog
}

// newFixture writes a configuration with calc, broken and off, and makes
// an engine over it, as switchboard panel does.
func newFixture(t *testing.T, extra map[string]any) *fixture {
	t.Helper()
	home := t.TempDir()
	servers := map[string]any{
		"calc":   map[string]any{"url": calcServer(t) + "/mcp"},
		"broken": map[string]any{"command": "/nonexistent/switchboard-panel-test"},
		"off":    map[string]any{"command": "/nonexistent/off", "disabled": true},
	}
	for k, v := range extra {
		servers[k] = v
	}
	data, _ := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	dir := filepath.Join(home, ".config", "switchboard")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	d := config.FromEnv(getenv, home, runtime.GOOS)
	log := switchboard.NewCallLog(0)
	cache := t.TempDir()
	open := func(ctx context.Context) (*switchboard.Engine, *config.Config, error) {
		cfg := config.Load(d)
		eng, err := switchboard.New(ctx, cfg, &switchboard.Options{
			Lookup: func(string) (string, bool) { return "", false }, CatalogPath: filepath.Join(cache, "catalog.db"),
			SpillDir: filepath.Join(cache, "spill"), OnCall: log.Add,
		})
		return eng, cfg, err
	}
	eng, cfg, err := open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	l := &Local{Engine: eng, Config: cfg, Log: log, Dirs: d, Reload: open}
	t.Cleanup(func() { l.Current().Close() })
	return &fixture{home: home, local: l, log: log}
}

// snapModel lets a test read the screen on the program's own goroutine.
type snapModel struct{ *Model }

type snapMsg chan string

func (s snapModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if ch, ok := msg.(snapMsg); ok {
		ch <- s.screen()
		return s, nil
	}
	_, cmd := s.Model.Update(msg)
	return s, cmd
}

type run struct {
	t    *testing.T
	tm   *teatest.TestModel
	home string
}

func start(t *testing.T, b Backend, home string, w, h int) *run {
	t.Helper()
	opts := Options{Home: home, Refresh: -1}
	tm := teatest.NewTestModel(t, snapModel{New(t.Context(), b, opts)}, teatest.WithInitialTermSize(w, h))
	t.Cleanup(func() {
		tm.Quit()
		tm.WaitFinished(t, teatest.WithFinalTimeout(30*time.Second))
	})
	return &run{t: t, tm: tm, home: home}
}

// waitFor waits until the screen shows s. It looks at the screen (on the
// program's goroutine) each time the program has drawn.
func (r *run) waitFor(s string) {
	r.t.Helper()
	r.waitUntil(func(screen string) bool { return strings.Contains(screen, s) })
}

// waitForRe is waitFor with a pattern.
func (r *run) waitForRe(re string) {
	r.t.Helper()
	p := regexp.MustCompile(re)
	r.waitUntil(p.MatchString)
}

func (r *run) waitUntil(ok func(screen string) bool) {
	r.t.Helper()
	teatest.WaitFor(r.t, r.tm.Output(), func([]byte) bool { return ok(r.screen()) },
		teatest.WithDuration(60*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

func (r *run) keys(ks ...string) {
	for _, k := range ks {
		switch k {
		case "enter":
			r.tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
		case "tab":
			r.tm.Send(tea.KeyPressMsg{Code: tea.KeyTab})
		case "esc":
			r.tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
		case "down":
			r.tm.Send(tea.KeyPressMsg{Code: tea.KeyDown})
		case "up":
			r.tm.Send(tea.KeyPressMsg{Code: tea.KeyUp})
		default:
			r.tm.Type(k)
		}
	}
}

// ages matches an age with the padding after it, which depends on the
// age's own width.
var ages = regexp.MustCompile(`\b(now|\d+[smhd] ago)\b( +)?`)

// screen returns the screen as it is now, normalised.
func (r *run) screen() string {
	ch := make(snapMsg, 1)
	r.tm.Send(ch)
	s := <-ch
	s = strings.ReplaceAll(s, r.home, "$HOME")
	return ages.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasSuffix(m, " ") {
			return "AGE "
		}
		return "AGE"
	})
}

func (r *run) golden(t *testing.T) {
	t.Helper()
	goldenText(t, r.screen())
}

func goldenText(t *testing.T, s string) {
	t.Helper()
	golden.RequireEqual(t, []byte(s))
}

func TestServersScreen(t *testing.T) {
	f := newFixture(t, nil)
	r := start(t, f.local, f.home, 100, 16)
	r.waitFor("SOURCE")
	// broken is first: connect it (it fails), then calc.
	r.keys("c")
	r.waitForRe(`broken\s+stdio\s+failed`)
	r.keys("down", "c")
	r.waitForRe(`calc\s+http\s+connected\s+3`)
	r.keys("up")
	r.waitFor("last error")
	r.golden(t)
}

func TestServersScreenNarrow(t *testing.T) {
	f := newFixture(t, nil)
	r := start(t, f.local, f.home, 50, 10)
	r.waitFor("SERVER")
	r.golden(t)
	// Widened, it shows what did not fit.
	r.tm.Send(tea.WindowSizeMsg{Width: 100, Height: 16})
	r.waitFor("SOURCE")
}

// TestCallFlow is the key flow: search, describe, call with the form, the
// result; then the call is in the recent calls.
func TestCallFlow(t *testing.T) {
	f := newFixture(t, nil)
	r := start(t, f.local, f.home, 90, 22)
	r.waitFor("SOURCE")
	r.keys("2", "sum two")
	r.waitFor("get-sum")
	t.Run("search", r.golden)
	r.keys("enter", "enter")
	r.waitFor("input schema")
	t.Run("describe", r.golden)
	r.keys("enter", "2", "tab", "x")
	r.waitFor("x")
	r.keys("enter")
	r.waitFor("must be a number")
	t.Run("form-error", r.golden)
	// Correct b and call.
	r.tm.Send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	r.keys("3.5", "enter")
	r.waitFor("The sum of 2 and 3.5 is 5.5.")
	t.Run("result", r.golden)

	calls := f.log.Recent()
	if len(calls) != 1 || calls[0].Tool != "get-sum" || calls[0].Server != "calc" || calls[0].Outcome != proxy.CallOK {
		t.Fatalf("calls recorded: %+v, want one ok call of get-sum on calc", calls)
	}
	r.keys("3")
	r.waitFor("STARTED")
	if s := r.screen(); !strings.Contains(s, "get-sum") || !strings.Contains(s, "ok") {
		t.Errorf("calls screen does not show the call:\n%s", s)
	}
}

func TestResultSpills(t *testing.T) {
	f := newFixture(t, nil)
	r := start(t, f.local, f.home, 90, 20)
	r.waitFor("SOURCE")
	r.keys("2", "many lines")
	r.waitFor("big")
	r.keys("enter", "enter")
	r.waitFor("input schema")
	r.keys("enter", "200000", "enter")
	r.waitFor("spilled to a file")
	s := r.screen()
	_, after, ok := strings.Cut(s, "spilled to a file")
	if !ok {
		t.Fatalf("no spill file shown:\n%s", s)
	}
	var path string // the lines after, to the blank one
	for _, l := range strings.Split(after, "\n")[1:] {
		if strings.TrimSpace(l) == "" {
			break
		}
		path += strings.TrimSpace(l)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the spill file shown cannot be read: %v", err)
	}
	if got := strings.Count(string(data), "line of output"); got != 200000/15 {
		t.Errorf("spill file has %d lines of output, want %d", got, 200000/15)
	}
}

func TestCallsScreen(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	log := switchboard.NewCallLog(3)
	for i, c := range []proxy.CallRecord{
		{Server: "calc", Tool: "get-sum", Duration: 120 * time.Millisecond, Outcome: proxy.CallOK, ArgsBytes: 15, ResultBytes: 80},
		{Server: "calc", Tool: "echo", Duration: 3 * time.Second, Outcome: proxy.CallError, ArgsBytes: 2048, ResultBytes: 300},
		{Server: "broken", Tool: "go", Duration: 10 * time.Millisecond, Outcome: proxy.CallFailed, ErrorClass: "start"},
		{Server: "calc", Tool: "slow", Duration: 90 * time.Second, Outcome: proxy.CallCanceled, ErrorClass: "canceled", ArgsBytes: 11},
	} {
		c.Start = now.Add(-time.Duration(10-i) * time.Minute)
		log.Add(c)
	}
	f := newFixture(t, nil)
	f.local.Log = log
	m := New(t.Context(), f.local, Options{Home: f.home, Refresh: -1, Now: func() time.Time { return now }})
	tm := teatest.NewTestModel(t, snapModel{m}, teatest.WithInitialTermSize(80, 10))
	r := &run{t: t, tm: tm, home: f.home}
	t.Cleanup(func() { tm.Quit(); tm.WaitFinished(t, teatest.WithFinalTimeout(30*time.Second)) })
	r.keys("3")
	r.waitFor("STARTED")
	ch := make(snapMsg, 1)
	tm.Send(ch)
	golden.RequireEqual(t, []byte(<-ch)) // ages are fixed by Now: not normalised
}

func TestProblemsScreen(t *testing.T) {
	f := newFixture(t, map[string]any{"bad name!": map[string]any{"command": "x"}, "both": map[string]any{"command": "x", "url": "http://127.0.0.1:1/mcp"}})
	r := start(t, f.local, f.home, 100, 12)
	r.waitFor("SOURCE")
	r.keys("4")
	r.waitFor("error")
	r.golden(t)
}

// TestEnableDisable writes our own file as switchboard disable does,
// keeping its comments, and the panel shows the new state.
func TestEnableDisable(t *testing.T) {
	f := newFixture(t, nil)
	file := filepath.Join(f.home, ".config", "switchboard", "config.json")
	data, _ := os.ReadFile(file)
	data = bytes.Replace(data, []byte("{\n"), []byte("{\n  // my servers\n"), 1)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	r := start(t, f.local, f.home, 100, 16)
	r.waitFor("SOURCE")
	r.keys("e") // broken, the first, is enabled: disable it
	r.waitFor("disabled broken in ~/.config/switchboard/config.json")
	got, _ := os.ReadFile(file)
	if !bytes.Contains(got, []byte("// my servers")) {
		t.Errorf("the comment was lost:\n%s", got)
	}
	cfg := config.Load(f.local.Dirs)
	if s, ok := cfg.Server("broken"); !ok || !s.Disabled {
		t.Errorf("broken is not disabled in the file:\n%s", got)
	}
	r.waitForRe(`broken\s+stdio\s+disabled`) // the status read after the change
	r.keys("e")
	r.waitFor("enabled broken")
	if s, _ := config.Load(f.local.Dirs).Server("broken"); s.Disabled {
		t.Error("broken is still disabled after enable")
	}
}

// TestServersScreenQuarantine: a server with tools quarantined by pinning
// shows how many in its row, and the command that shows and accepts the
// change under the table.
func TestServersScreenQuarantine(t *testing.T) {
	f := newFixture(t, nil)
	m := New(t.Context(), f.local, Options{Home: f.home, Refresh: -1})
	m.Update(tea.WindowSizeMsg{Width: 140, Height: 16})
	st := front.AdminStatus{Servers: []front.AdminServer{{ServerStatus: proxy.ServerStatus{
		Name: "calc", State: proxy.StateConnected, Transport: "http", Tools: 3, Quarantined: 2,
		Warnings: []string{`approve glob "nope*" matches no tool`}}}}}
	m.Update(statusMsg{status: st})
	view := m.View().Content
	for _, want := range []string{"3 (2 changed)", "2 quarantined", "switchboard approve calc", `approve glob "nope*" matches no tool`} {
		if !strings.Contains(view, want) {
			t.Errorf("the servers screen does not show %q:\n%s", want, view)
		}
	}
}
