package gateway

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/proxy"
)

func TestMain(m *testing.M) {
	testserver.Main() // runs the fixture server when this binary is started as one
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// def is one server definition for a test configuration.
type def map[string]any

// fixture defines the misbehaving fixture server in a mode.
func fixture(mode string) def {
	path, args, env := testserver.Command(mode)
	return def{"command": path, "args": args, "env": env}
}

// peer defines a real npm peer.
func peer(c mcptest.Command) def {
	env := map[string]string{}
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return def{"command": c.Path, "args": c.Args, "env": env}
}

// newEngine writes servers into a fresh user configuration and returns an
// engine over it, closed when the test ends.
func newEngine(t *testing.T, servers map[string]def, settings map[string]any) *Engine {
	t.Helper()
	return newEngineTB(t, servers, settings)
}

// newEngineTB is newEngine for tests and benchmarks alike.
func newEngineTB(t testing.TB, servers map[string]def, settings map[string]any) *Engine {
	t.Helper()
	return engineIn(t, t.TempDir(), servers, settings, nil)
}

// handle runs one proxy request given as JSON.
func handle(t *testing.T, e *Engine, req string) *proxy.Result {
	t.Helper()
	return e.Handle(t.Context(), json.RawMessage(req))
}

// must runs a request that must succeed.
func must(t *testing.T, e *Engine, req string) *proxy.Result {
	t.Helper()
	r := handle(t, e, req)
	if r.IsError {
		t.Fatalf("%s: error result:\n%s", req, r.Text)
	}
	return r
}

// wantText checks that a result's text holds every piece.
func wantText(t *testing.T, r *proxy.Result, pieces ...string) {
	t.Helper()
	for _, p := range pieces {
		if !strings.Contains(r.Text, p) {
			t.Errorf("result of %s lacks %q:\n%s", r.Details.Operation, p, r.Text)
		}
	}
}

// states returns each server's connection state.
func states(e *Engine) map[string]upstream.State {
	out := map[string]upstream.State{}
	for _, st := range e.pool.Snapshot() {
		out[st.Name] = st.State
	}
	return out
}

func TestStatusAndInvalidRequestsConnectNothing(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	servers := map[string]def{}
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		servers[n] = fixture(testserver.Good)
	}
	e := newEngine(t, servers, nil)
	r := must(t, e, `{}`)
	wantText(t, r, "10 servers (0 connected)", "a  disconnected")
	if len(r.Details.Servers) != 10 {
		t.Errorf("status lists %d servers, want 10", len(r.Details.Servers))
	}
	for _, bad := range []string{
		`{"tool":"echo","search":"x"}`, `{"tool":""}`, `{"server":"a","limit":2}`, `{"operation":"prompts.get","server":"a"}`,
		`{"bogus":true}`, `{"tool":"echo","server":"nope"}`, `{"server":"nope"}`, `{"operation":"resources.read","server":"a","resource":"r1"}`,
	} {
		r := handle(t, e, bad)
		if !r.IsError {
			t.Errorf("%s: got success, want an error", bad)
		}
	}
	for name, st := range states(e) {
		if st != upstream.StateDisconnected {
			t.Errorf("server %s is %s after status and rejected requests, want disconnected", name, st)
		}
	}
	r = handle(t, e, `{"server":"nope"}`)
	wantText(t, r, `unknown server "nope"`, "a, b, c")
	r = handle(t, e, `{"tool":"echo","search":"x"}`)
	wantText(t, r, "one action at a time", "example:")
}

func TestEverything(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	p := mcptest.Peers(t)
	e := newEngine(t, map[string]def{"everything": peer(p.Everything())}, nil)

	r := must(t, e, `{"server":"everything"}`)
	wantText(t, r, `tools on "everything"`, "get-sum — Returns the sum of two numbers", "echo")
	if e.pool.Snapshot()[0].State != upstream.StateConnected {
		t.Errorf("server is %s after listing its tools, want connected", e.pool.Snapshot()[0].State)
	}

	r = must(t, e, `{"search":"add two numbers"}`)
	if len(r.Details.Tools) == 0 || r.Details.Tools[0].Name != "get-sum" {
		t.Errorf("search for adding numbers: got %+v first, want get-sum\n%s", r.Details.Tools, r.Text)
	}
	wantText(t, r, "everything_get-sum — Returns the sum of two numbers")

	// Several needs: each gets places, and each tool says which it answers.
	r = must(t, e, `{"search":["add two numbers","echo back a message"],"limit":4}`)
	if got := r.Details.Search.Queries; len(got) != 2 {
		t.Errorf("search of two needs: queries %q, want both", got)
	}
	byNeed := map[string][]string{}
	for _, ti := range r.Details.Tools {
		byNeed[ti.Need] = append(byNeed[ti.Need], ti.Name)
	}
	if got := byNeed["add two numbers"]; len(got) != 2 || got[0] != "get-sum" {
		t.Errorf("need 1 got %v, want get-sum first of 2\n%s", got, r.Text)
	}
	if got := byNeed["echo back a message"]; len(got) != 2 || got[0] != "echo" {
		t.Errorf("need 2 got %v, want echo first of 2\n%s", got, r.Text)
	}
	wantText(t, r, `need 1: "add two numbers"`, `need 2: "echo back a message"`)

	r = must(t, e, `{"describe":"get_sum"}`)
	wantText(t, r, `tool "get-sum" on "everything"`, `"a"`, `"b"`, "input schema:")
	if r.Details.Tool == nil || r.Details.Tool.Name != "get-sum" {
		t.Errorf("describe details = %+v, want get-sum", r.Details.Tool)
	}

	r = must(t, e, `{"tool":"everything_get-sum","args":{"a":2,"b":3}}`)
	wantText(t, r, "5")
	r = must(t, e, `{"tool":"GET-SUM","server":"everything","args":"{\"a\":40,\"b\":2}"}`)
	wantText(t, r, "42")

	r = must(t, e, `{"operation":"resources.list","server":"everything"}`)
	wantText(t, r, "r1  ", "template ")
	if len(r.Details.Resources) == 0 {
		t.Fatalf("no resources listed:\n%s", r.Text)
	}
	r = must(t, e, `{"operation":"resources.read","server":"everything","resource":"r1"}`)
	wantText(t, r, "<untrusted-data source=\"resource demo://", "</untrusted-data>")

	r = must(t, e, `{"operation":"prompts.list","server":"everything"}`)
	wantText(t, r, "args-prompt(city*, state)", "simple-prompt")
	r = handle(t, e, `{"operation":"prompts.get","server":"everything","prompt":"args-prompt","args":{}}`)
	wantText(t, r, `prompt "args-prompt" needs "city"`, "nothing was requested")
	r = handle(t, e, `{"operation":"prompts.get","server":"everything","prompt":"args-prompt","args":{"city":"Oslo","planet":"Earth"}}`)
	wantText(t, r, `has no argument "planet"`)
	r = must(t, e, `{"operation":"prompts.get","server":"everything","prompt":"args-prompt","args":{"city":"Oslo"}}`)
	wantText(t, r, "What's weather in Oslo?", "<untrusted-data")

	must(t, e, `{"operation":"instructions","server":"everything"}`)

	gen, _ := e.connection("everything")
	r = must(t, e, `{"operation":"reconnect","server":"everything"}`)
	wantText(t, r, `reconnected "everything"`)
	if now, _ := e.connection("everything"); now == gen {
		t.Error("reconnect did not make a new connection")
	}
	r = handle(t, e, `{"operation":"resources.read","server":"everything","resource":"r1"}`)
	if !r.IsError {
		t.Errorf("a reference from before reconnect was accepted:\n%s", r.Text)
	}
	wantText(t, r, "from an earlier connection")
}

func TestResolution(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	e := newEngine(t, map[string]def{"one": fixture(testserver.Good), "two": fixture(testserver.Good)}, nil)
	r := handle(t, e, `{"tool":"echo","args":{"text":"hi"}}`)
	if !r.IsError {
		t.Fatalf("an ambiguous name was called:\n%s", r.Text)
	}
	wantText(t, r, `"echo" on "one"`, `"echo" on "two"`, "nothing was called")
	must(t, e, `{"tool":"one_echo","args":{"text":"hi"}}`)
	r = must(t, e, `{"tool":"echo","server":"TWO","args":{"text":"via two"}}`)
	wantText(t, r, "via two")
	r = handle(t, e, `{"tool":"ecko","server":"one"}`)
	wantText(t, r, "unknown tool", "did you mean: echo (one)")
	r = handle(t, e, `{"describe":"slo"}`)
	wantText(t, r, "slow (one)", "slow (two)")
}

func TestCallErrorsAreNotReplayed(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	e := newEngine(t, map[string]def{"f": mergeDef(fixture(testserver.Good), def{"requestTimeoutMs": 1500})}, nil)
	for _, then := range []string{"fail", "hang", "crash"} {
		t.Run(then, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "calls")
			args, _ := json.Marshal(map[string]any{"tool": "record", "server": "f", "args": map[string]string{"file": file, "then": then}})
			r := handle(t, e, string(args))
			if !r.IsError {
				t.Fatalf("record then %s: got success:\n%s", then, r.Text)
			}
			switch then {
			case "fail":
				wantText(t, r, `tool "record" on "f" returned an error`, "record failed as asked")
			case "hang":
				wantText(t, r, "timed out after 1.5s")
			}
			// The next operation may reconnect; it must not replay the call.
			must(t, e, `{"tool":"echo","server":"f","args":{"text":"after"}}`)
			data, _ := os.ReadFile(file)
			if n := strings.Count(string(data), "called"); n != 1 {
				t.Errorf("record ran %d times, want exactly once", n)
			}
		})
	}
}

func mergeDef(a, b def) def {
	out := def{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func TestBoundsSpillAndCleanup(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	e := newEngine(t, map[string]def{"f": fixture(testserver.Good)}, map[string]any{"output": map[string]int{"maxBytes": 2048, "maxLines": 50}})
	// The limit holds the text and the details (the mcp tool's structured
	// content) together: the text may have what the details leave.
	r := must(t, e, `{"tool":"big","server":"f","args":{"bytes":1}}`)
	n := 2048 - detailsLen(t, r.Details)
	r = must(t, e, fmt.Sprintf(`{"tool":"big","server":"f","args":{"bytes":%d}}`, n))
	if len(r.Details.Spills) != 0 || len(r.Text) != n {
		t.Errorf("exactly 2048 bytes with the details: %d bytes inline and %d spills, want all %d inline", len(r.Text), len(r.Details.Spills), n)
	}
	r = must(t, e, fmt.Sprintf(`{"tool":"big","server":"f","args":{"bytes":%d}}`, n+1))
	if len(r.Details.Spills) != 1 {
		t.Fatalf("2049 bytes with the details: %d spills, want 1:\n%s", len(r.Details.Spills), r.Text)
	}
	sp := r.Details.Spills[0]
	wantText(t, r, sp.Path, fmt.Sprintf("%d bytes, with the %d of the rest of the result, exceed the limit of 2048", n+1, 2048-n))
	data, err := os.ReadFile(sp.Path)
	if err != nil || len(data) != n+1 {
		t.Fatalf("spill file holds %d bytes (%v), want %d", len(data), err, n+1)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sp.Path); !os.IsNotExist(err) {
		t.Errorf("spill file %s survived Close", sp.Path)
	}
}

func TestCanaryNeverShown(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	const canary = "canary-5f1e9d-never-show"
	t.Setenv("SB_CANARY_TOKEN", canary)
	e := newEngine(t, map[string]def{"f": mergeDef(fixture(testserver.Good), def{"env": map[string]string{
		testserver.Env: testserver.Good, "GORACE": "atexit_sleep_ms=0", "API_TOKEN": "${SB_CANARY_TOKEN}"}})},
		map[string]any{"output": map[string]int{"maxBytes": 1024, "maxLines": 20}})
	var texts []string
	for _, req := range []string{`{}`, `{"server":"f"}`, `{"search":"echo"}`, `{"describe":"echo"}`, `{"tool":"echo","args":{"text":"x"}}`,
		`{"tool":"big","args":{"bytes":5000}}`, `{"operation":"resources.list","server":"f"}`, `{"operation":"resources.read","server":"f","resource":"r1"}`,
		`{"operation":"prompts.list","server":"f"}`, `{"operation":"prompts.get","server":"f","prompt":"greet","args":{"name":"n"}}`,
		`{"operation":"instructions","server":"f"}`, `{"operation":"reconnect","server":"f"}`, `{"tool":"nope"}`} {
		r := handle(t, e, req)
		texts = append(texts, r.Text, string(r.JSON()))
	}
	texts = append(texts, e.Tool(t.Context()).Description)
	for _, s := range texts {
		if strings.Contains(s, canary) {
			t.Fatalf("a result shows the canary:\n%s", s)
		}
	}
	// Nor any file: spill files and the catalog.
	for _, dir := range []string{e.opts.SpillDir, filepath.Dir(e.opts.CatalogPath)} {
		filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				if data, _ := os.ReadFile(path); strings.Contains(string(data), canary) {
					t.Errorf("file %s holds the canary", path)
				}
			}
			return nil
		})
	}
}
