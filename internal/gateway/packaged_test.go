package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// shop is a packaged server for tests, a real go-sdk server whose query
// tool records the arguments it receives.
type shop struct {
	*mcp.Server
	mu       sync.Mutex
	received []map[string]any
	sessions int           // sessions opened
	opened   chan struct{} // has a value after a session opens
}

const querySchema = `{"type":"object","properties":{"sql":{"type":"string","description":"SQL to run"},"limit":{"type":"integer"}},"required":["sql"]}`

func newShop() *shop {
	sh := &shop{opened: make(chan struct{}, 1)}
	sh.Server = mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1"}, &mcp.ServerOptions{Instructions: "The shop's orders and stock."})
	// A client opens a session with server/discover (2026-07-28), or
	// initialize before it.
	sh.Server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "server/discover" || method == "initialize" {
				sh.mu.Lock()
				sh.sessions++
				sh.mu.Unlock()
				select {
				case sh.opened <- struct{}{}:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(sh.Server, &mcp.Tool{Name: "query", Description: "Runs a read-only SQL query over the shop's orders database.", InputSchema: json.RawMessage(querySchema)},
		func(_ context.Context, _ *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, any, error) {
			sh.mu.Lock()
			sh.received = append(sh.received, args)
			sh.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("rows of %v", args["sql"])}}}, nil, nil
		})
	mcp.AddTool(sh.Server, &mcp.Tool{Name: "big", Description: "Returns a long text of x.", InputSchema: json.RawMessage(`{"type":"object","properties":{"bytes":{"type":"integer"}},"required":["bytes"]}`)},
		func(_ context.Context, _ *mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, any, error) {
			n, _ := args["bytes"].(float64)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", int(n))}}}, nil, nil
		})
	return sh
}

// calls returns the arguments query received so far.
func (sh *shop) calls() []map[string]any {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return append([]map[string]any(nil), sh.received...)
}

func (sh *shop) initialized() int {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.sessions
}

// recentOrders is a facade over the shop's query: the SQL is fixed, the
// caller's n is passed as limit.
func recentOrders() host.Facade {
	return host.Facade{
		Name: "recent_orders", Description: "Lists the most recent orders.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","description":"how many"}},"required":["n"]}`),
		Server:      "shop", Tool: "query",
		Fixed:  map[string]any{"sql": "select * from orders order by placed desc"},
		Rename: map[string]string{"n": "limit"},
	}
}

func TestPackagedServer(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	sh := newShop()
	e := engineIn(t, t.TempDir(), map[string]def{"f": fixture(testserver.Good)}, map[string]any{"output": map[string]int{"maxBytes": 2048, "maxLines": 50}},
		&Options{Servers: []host.Server{{Name: "shop", Server: sh.Server, SearchKeywords: map[string][]string{"query": {"sales"}}}}})

	// Status connects nothing, and names the transport.
	r := must(t, e, `{}`)
	wantText(t, r, "shop")
	if got := states(e)["shop"]; got != upstream.StateDisconnected {
		t.Errorf("shop is %s before use, want disconnected", got)
	}
	if n := sh.initialized(); n != 0 {
		t.Errorf("the packaged server had %d sessions before use, want 0 (lazy)", n)
	}
	st := statusOf(t, e, "shop")
	if st.Transport != "in-process" {
		t.Errorf("shop's transport is %q, want in-process", st.Transport)
	}
	if !strings.Contains(e.Tool(t.Context()).Description, "shop") {
		t.Errorf("the mcp tool's description does not name shop:\n%s", e.Tool(t.Context()).Description)
	}

	// Search indexes it on demand, with the host's keywords.
	r = must(t, e, `{"search":"sales"}`)
	wantText(t, r, "shop_query")
	r = must(t, e, `{"describe":"shop_query"}`)
	wantText(t, r, `tool "query" on "shop"`, "read-only SQL", `"limit"`)
	r = must(t, e, `{"tool":"query","server":"shop","args":{"sql":"select 1"}}`)
	wantText(t, r, "rows of select 1")
	if got := sh.calls(); len(got) != 1 || got[0]["sql"] != "select 1" {
		t.Errorf("query received %v, want one call with sql \"select 1\"", got)
	}
	st = statusOf(t, e, "shop")
	if st.State != "connected" || st.Tools != 2 {
		t.Errorf("shop after a call: state %q with %d tools, want connected with 2", st.State, st.Tools)
	}

	// Results are bounded like any server's.
	r = must(t, e, `{"tool":"big","server":"shop","args":{"bytes":5000}}`)
	if len(r.Details.Spills) != 1 {
		t.Fatalf("5000 bytes over a limit of 2048: %d spills, want 1:\n%s", len(r.Details.Spills), r.Text)
	}
	if data, err := os.ReadFile(r.Details.Spills[0].Path); err != nil || len(data) != 5000 {
		t.Errorf("spill file holds %d bytes (%v), want 5000", len(data), err)
	}

	// Reconnect makes a new session of the host's server.
	must(t, e, `{"operation":"reconnect","server":"shop"}`)
	if n := sh.initialized(); n != 2 {
		t.Errorf("the packaged server had %d sessions after a reconnect, want 2", n)
	}
	must(t, e, `{"tool":"query","server":"shop","args":{"sql":"select 2"}}`)
}

func statusOf(t *testing.T, e *Engine, name string) proxy.ServerStatus {
	t.Helper()
	for _, st := range e.Status(t.Context()) {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("status has no server %q", name)
	return proxy.ServerStatus{}
}

// A packaged server shadows a configured one of the same name (travis234's
// rule): New succeeds, the packaged one answers, and status says which
// definition is shadowed, and where.
func TestPackagedShadowsConfigured(t *testing.T) {
	home := t.TempDir()
	d := config.Dirs{Home: home}
	if err := os.MkdirAll(filepath.Dir(d.UserFile()), 0o700); err != nil {
		t.Fatal(err)
	}
	doc := "{\n  \"mcpServers\": {\n    \"shop\": {\"command\": \"shop-server\"}\n  }\n}\n"
	if err := os.WriteFile(d.UserFile(), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	sh := newShop()
	e, err := New(t.Context(), config.Load(d), &Options{SpillDir: filepath.Join(home, "spill"), Servers: []host.Server{{Name: "shop", Server: sh.Server}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r := must(t, e, `{"server": "shop"}`)
	if !strings.Contains(r.Text, "query") {
		t.Errorf("the shadowing server's listing: %q; want the packaged server's tools", r.Text)
	}
	st := statusOf(t, e, "shop")
	if st.Transport != string(config.TransportInProcess) || len(st.Warnings) != 1 {
		t.Fatalf("status of shop: %+v; want the packaged server, with one warning", st)
	}
	for _, want := range []string{d.UserFile() + ":3:13", "mcpServers.shop", "shadowed", "packages a server named \"shop\"", "rename this one"} {
		if !strings.Contains(st.Warnings[0], want) {
			t.Errorf("status warning lacks %q: %s", want, st.Warnings[0])
		}
	}
}

// A configuration that fails closed blocks the servers it configures, not
// the packaged ones: no file can have meant to disable them.
func TestPackagedServerUsableWhenConfigFailsClosed(t *testing.T) {
	home := t.TempDir()
	d := config.Dirs{Home: home}
	if err := os.MkdirAll(filepath.Dir(d.UserFile()), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(d.UserFile(), []byte(`{"mcpServers": {"f": {"command": "x"}}, "bogus": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.Load(d)
	if cfg.Err() == nil {
		t.Fatal("the configuration did not fail closed")
	}
	e, err := New(t.Context(), cfg, &Options{SpillDir: filepath.Join(home, "spill"), Servers: []host.Server{{Name: "shop", Server: newShop().Server}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r := must(t, e, `{"tool":"query","server":"shop","args":{"sql":"select 1"}}`)
	wantText(t, r, "rows of select 1")
	if st := statusOf(t, e, "shop"); st.State != "connected" {
		t.Errorf("shop is %q, want connected", st.State)
	}
}

func TestFacade(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	sh := newShop()
	e := engineIn(t, t.TempDir(), map[string]def{}, nil, &Options{Servers: []host.Server{{Name: "shop", Server: sh.Server}}, Facades: []host.Facade{recentOrders()}})
	if n := sh.initialized(); n != 1 {
		t.Errorf("New checked the facade over %d sessions, want 1", n)
	}
	if got := states(e)["shop"]; got != upstream.StateDisconnected {
		t.Errorf("shop is %s after New, want disconnected: checking a facade is not a connection", got)
	}

	r := must(t, e, `{"search":"recent orders"}`)
	wantText(t, r, "shop_recent_orders", "Lists the most recent orders.")
	r = must(t, e, `{"describe":"recent_orders","server":"shop"}`)
	wantText(t, r, `tool "recent_orders" on "shop"`, `"n"`, "how many")
	r = must(t, e, `{"tool":"shop_recent_orders","args":{"n":5}}`)
	wantText(t, r, "rows of select * from orders order by placed desc")
	want := []map[string]any{{"sql": "select * from orders order by placed desc", "limit": float64(5)}}
	if diff := cmp.Diff(want, sh.calls()); diff != "" {
		t.Errorf("query received (-want +got):\n%s", diff)
	}

	// Arguments are checked against the facade's schema; nothing is sent.
	for _, bad := range []string{`{"n":"five"}`, `{}`, `{"n":1,"sql":"drop table orders"}`} {
		r = handle(t, e, `{"tool":"shop_recent_orders","args":`+bad+`}`)
		if !r.IsError || !strings.Contains(r.Text, `invalid arguments for "recent_orders"`) {
			t.Errorf("args %s: got %v %q, want an error about the facade's arguments", bad, r.IsError, r.Text)
		}
	}
	if got := len(sh.calls()); got != 1 {
		t.Errorf("query was called %d times, want 1: bad facade arguments reached it", got)
	}
	// Without Exclusive, the tool is still there.
	must(t, e, `{"tool":"query","server":"shop","args":{"sql":"select 3"}}`)
}

func TestFacadeExclusive(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	sh := newShop()
	f := recentOrders()
	f.Exclusive = true
	e := engineIn(t, t.TempDir(), map[string]def{}, nil, &Options{Servers: []host.Server{{Name: "shop", Server: sh.Server}}, Facades: []host.Facade{f}})

	r := must(t, e, `{"server":"shop"}`)
	wantText(t, r, "recent_orders", "big")
	if strings.Contains(r.Text, "query") {
		t.Errorf("the shop's tool list shows the hidden tool:\n%s", r.Text)
	}
	r = must(t, e, `{"search":"sql query"}`)
	if strings.Contains(r.Text, "shop_query") {
		t.Errorf("search finds the hidden tool:\n%s", r.Text)
	}
	for _, req := range []string{`{"describe":"query","server":"shop"}`, `{"tool":"query","server":"shop","args":{"sql":"select 1"}}`, `{"tool":"shop_query","args":{"sql":"select 1"}}`} {
		if r := handle(t, e, req); !r.IsError {
			t.Errorf("%s: got success, want an error:\n%s", req, r.Text)
		}
	}
	// Not even by its exact name, past the catalog (as a gateway's direct tools call).
	_, err := e.CallTool(t.Context(), "shop", &mcp.CallToolParams{Name: "query", Arguments: map[string]any{"sql": "select 1"}})
	if err == nil || !strings.Contains(err.Error(), `reachable only through the facade "recent_orders"`) {
		t.Errorf("calling the hidden tool by name: %v, want refused naming the facade", err)
	}
	if got := sh.calls(); len(got) != 0 {
		t.Fatalf("the hidden tool was called with %v", got)
	}
	must(t, e, `{"tool":"recent_orders","server":"shop","args":{"n":2}}`)
	if got := sh.calls(); len(got) != 1 || got[0]["limit"] != float64(2) {
		t.Errorf("query received %v through the facade, want one call with limit 2", got)
	}
}

// Facades are checked at New against their own schema and the packaged
// tool they call; each error names the facade, the field and what to do.
func TestFacadeChecks(t *testing.T) {
	with := func(change func(*host.Facade)) host.Facade {
		f := recentOrders()
		change(&f)
		return f
	}
	for _, tc := range []struct {
		name   string
		facade host.Facade
		want   []string
	}{
		{"no tool", with(func(f *host.Facade) { f.Tool = "querry" }), []string{`facade "recent_orders"`, `no tool "querry"`, "big, query", "fix Facade.Tool"}},
		{"unknown server", with(func(f *host.Facade) { f.Server = "shopp" }), []string{`server "shopp" is neither packaged nor configured`, "fix Facade.Server"}},
		{"field not taken", with(func(f *host.Facade) { f.Rename = nil }), []string{`field "n" is passed to "query" as "n"`, "limit, sql", "Facade.Rename"}},
		{"type mismatch", with(func(f *host.Facade) {
			f.InputSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"string"}},"required":["n"]}`)
		}), []string{`field "n" is of type string`, `"limit" of type integer`, "change the field's type"}},
		{"fixed not taken", with(func(f *host.Facade) { f.Fixed["table"] = "orders" }), []string{`fixed field "table"`, "remove it from Facade.Fixed"}},
		{"fixed of the wrong type", with(func(f *host.Facade) { f.Fixed["sql"] = 42 }), []string{`fixed field "sql" does not fit`, "fix its value in Facade.Fixed"}},
		{"required not given", with(func(f *host.Facade) { f.Fixed = nil }), []string{`"query" requires "sql"`, "neither fixes nor passes", "add it to Facade.Fixed"}},
		{"required passed from an optional field", with(func(f *host.Facade) {
			f.InputSchema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
			f.Fixed, f.Rename = nil, map[string]string{"q": "sql"}
		}), []string{`field "q" that passes it is optional`, `"required"`}},
		{"fixed and passed", with(func(f *host.Facade) { f.Fixed["n"] = 1 }), []string{`field "n" is both fixed and an argument`}},
		{"renamed onto a fixed field", with(func(f *host.Facade) { f.Rename["n"] = "sql" }), []string{`field "n" is passed as "sql", which is fixed`}},
		{"rename of nothing", with(func(f *host.Facade) { f.Rename["m"] = "x" }), []string{`renames "m", which the facade's schema does not have`}},
		{"not an object schema", with(func(f *host.Facade) { f.InputSchema = json.RawMessage(`{"type":"string"}`) }), []string{`must have "type": "object"`, "fix Facade.InputSchema"}},
		{"no description", with(func(f *host.Facade) { f.Description = "" }), []string{"no description"}},
		{"bad name", with(func(f *host.Facade) { f.Name = "recent orders" }), []string{"invalid name"}},
		{"a tool's name", with(func(f *host.Facade) { f.Name = "big" }), []string{`has a tool of that name already`, "rename the facade"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			_, err := New(t.Context(), config.Load(config.Dirs{Home: home}), &Options{SpillDir: filepath.Join(home, "spill"),
				Servers: []host.Server{{Name: "shop", Server: newShop().Server}}, Facades: []host.Facade{tc.facade}})
			if err == nil {
				t.Fatal("New: no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
}

// A facade over a configured server is checked when its tools are listed,
// since New connects no configured server: one that fits works, one that
// does not is left out, and calling it says why.
func TestFacadeOverConfiguredServer(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	shout := host.Facade{Name: "shout", Description: "Echoes HELLO.", Server: "f", Tool: "echo", Fixed: map[string]any{"text": "HELLO"}, Direct: true}
	broken := host.Facade{Name: "broken", Description: "Echoes a number.", Server: "f", Tool: "echo", Fixed: map[string]any{"text": 7}}
	e := engineIn(t, t.TempDir(), map[string]def{"f": fixture(testserver.Good)}, nil, &Options{Facades: []host.Facade{shout, broken}})
	if got := states(e)["f"]; got != upstream.StateDisconnected {
		t.Errorf("f is %s after New, want disconnected", got)
	}
	r := must(t, e, `{"tool":"shout","server":"f"}`)
	wantText(t, r, "HELLO")
	r = must(t, e, `{"server":"f"}`)
	wantText(t, r, "shout — Echoes HELLO.")
	if strings.Contains(r.Text, "broken") {
		t.Errorf("the facade that does not fit is listed:\n%s", r.Text)
	}
	_, err := e.CallTool(t.Context(), "f", &mcp.CallToolParams{Name: "broken", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), `fixed field "text" does not fit`) {
		t.Errorf("calling the facade that does not fit: %v, want why", err)
	}
	s, _ := e.Config().Server("f")
	if !s.Direct("shout") || s.Direct("broken") {
		t.Errorf("direct tools of f: shout %v, broken %v; want shout only", s.Direct("shout"), s.Direct("broken"))
	}
}

// A packaged server's session that ends (the host closed it) is noticed,
// and the next use connects a new one, as for a server whose process
// exited.
func TestPackagedServerSessionEnds(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	sh := newShop()
	e := engineIn(t, t.TempDir(), map[string]def{}, nil, &Options{Servers: []host.Server{{Name: "shop", Server: sh.Server}}})
	must(t, e, `{"tool":"query","server":"shop","args":{"sql":"select 1"}}`)
	lost := make(chan string, 16)
	cancel := e.Subscribe(func(_ context.Context, ev Event) {
		if ev.Server == "shop" && ev.Status.State != "connected" {
			lost <- ev.Status.State
		}
	})
	defer cancel()
	for ss := range sh.Server.Sessions() {
		ss.Close()
	}
	// The engine notices the end: it reports the server not connected, or
	// it has already opened a new session (a reconnect can come before the
	// change is published, which then reports the server as connected).
	for noticed := false; !noticed; {
		select {
		case <-lost:
			noticed = true
		case <-sh.opened:
			noticed = sh.initialized() > 1
		case <-t.Context().Done():
			t.Fatal("the end of the packaged server's session was not noticed")
		}
	}
	r := must(t, e, `{"tool":"query","server":"shop","args":{"sql":"select 2"}}`)
	wantText(t, r, "rows of select 2")
	if n := sh.initialized(); n != 2 {
		t.Errorf("the packaged server had %d sessions, want 2: one replaced", n)
	}
}
