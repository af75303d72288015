package front

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/oauthtest"
)

// The tests here attack how the gateway routes what a server sends toward
// a client (elicitation, sampling, log messages, login URLs) when several
// clients share its connections (docs/serve.md, "Requests from servers").
// Each server is a hostile router (hostile.NewRouter) over stdio, whose
// tools ask the client when the test says so; each client is a witness,
// which records what it is asked and answers with its own name.

// routerDef is a hostile router over stdio, its tools also direct tools.
func routerDef() def {
	path, args, env := hostile.Command(hostile.Router)
	return def{"command": path, "args": args, "env": env, "directTools": []string{"do", "gated", "after", "together"}}
}

// A door is how a client reaches the gateway over Streamable HTTP.
type door struct {
	name    string
	lane    bool   // the fast lane is on, and must take calls
	version string // the protocol revision the client asks for
}

var doors = []door{
	{"go-sdk", false, "2025-11-25"},
	{"fast lane", true, "2025-11-25"},
	{"multi round-trip", false, ""}, // the newest: 2026-07-28, input-required results
}

// eachDoor runs f for every door, calling tools through the mcp tool
// ("mcp") and as direct tools ("direct").
func eachDoor(t *testing.T, f func(t *testing.T, d door, via string)) {
	for _, d := range doors {
		for _, via := range []string{"mcp", "direct"} {
			t.Run(d.name+"/"+via, func(t *testing.T) {
				mcptest.CheckNoLeaks(t)
				f(t, d, via)
			})
		}
	}
}

// A witness is a client that records what it is asked and answers with its
// name: an elicitation with {"answer": name}, sampling with name as the
// model's text.
type witness struct {
	name string

	mu      sync.Mutex
	seen    []string      // "elicit: message", "sample: system prompt | text", "log: data"
	changed chan struct{} // closed and replaced when seen grows
}

func newWitness(name string) *witness {
	return &witness{name: name, changed: make(chan struct{})}
}

func (w *witness) note(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, s)
	close(w.changed)
	w.changed = make(chan struct{})
}

func (w *witness) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			w.note("elicit: " + req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": w.name}}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			var msg string
			if len(req.Params.Messages) > 0 {
				if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
					msg = tc.Text
				}
			}
			w.note("sample: " + req.Params.SystemPrompt + " | " + msg)
			return &mcp.CreateMessageResult{Model: "witness", Role: "assistant", Content: &mcp.TextContent{Text: w.name}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			w.note(fmt.Sprint("log: ", req.Params.Data))
		},
	}
}

// saw returns what the witness has been asked so far.
func (w *witness) saw() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

// waitFor waits until the witness has seen something that ok accepts.
func (w *witness) waitFor(ctx context.Context, ok func(string) bool) bool {
	for {
		w.mu.Lock()
		ch := w.changed
		for _, s := range w.seen {
			if ok(s) {
				w.mu.Unlock()
				return true
			}
		}
		w.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// dial connects the witness's client to the gateway at url, asking for
// version, with log messages of every level.
func (w *witness) dial(t *testing.T, url, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "witness-" + w.name, Version: "1"}, w.options())
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	return cs
}

// callVia calls a server's tool through the mcp tool or as a direct tool,
// and returns the result's text.
func callVia(ctx context.Context, cs *mcp.ClientSession, via, server, tool string, args map[string]any) (string, error) {
	params := &mcp.CallToolParams{Name: server + "_" + tool, Arguments: args}
	if via == "mcp" {
		params = &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"tool": tool, "server": server, "args": args}}
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		return "", err
	}
	return text(res), nil
}

// async runs callVia in the background; the channel gets its text, or the
// error's.
func async(ctx context.Context, cs *mcp.ClientSession, via, server, tool string, args map[string]any) <-chan string {
	ch := make(chan string, 1)
	go func() {
		out, err := callVia(ctx, cs, via, server, tool, args)
		if err != nil {
			out = "call failed: " + err.Error()
		}
		ch <- out
	}()
	return ch
}

// openGate opens a gate for a router's tools to wait at.
func openGate(t *testing.T) *hostile.Gate {
	t.Helper()
	g, err := hostile.OpenGate()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func accept(t *testing.T, g *hostile.Gate) *hostile.Held {
	t.Helper()
	h, err := g.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func release(t *testing.T, h *hostile.Held) string {
	t.Helper()
	out, err := h.Release()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// warmLane makes calls until the fast lane takes one of cs's: go-sdk's
// client opens its standalone stream, without which the lane leaves the
// calls of a client that can be asked to go-sdk, a moment after it
// connected.
func warmLane(t *testing.T, g *testGateway, cs *mcp.ClientSession) {
	t.Helper()
	for i := 0; i < 1000; i++ {
		before := g.fastCalls()
		if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		if g.fastCalls() > before {
			return
		}
	}
	t.Fatal("the fast lane took none of 1000 calls")
}

// routingGateway is a gateway over the named routers, served over HTTP
// through door d; it returns the gateway and the URL of /mcp.
func routingGateway(t *testing.T, d door, servers ...string) (*testGateway, string) {
	t.Helper()
	defs := map[string]def{}
	for _, name := range servers {
		defs[name] = routerDef()
	}
	g := newGateway(t, defs, nil)
	return g, g.serveHTTP(t, HTTPOptions{NoFastLane: !d.lane}).URL + "/mcp"
}

// checkLane fails when the door is the fast lane and it took no call.
func checkLane(t *testing.T, g *testGateway, d door, before int64) {
	t.Helper()
	if d.lane && g.fastCalls() == before {
		t.Error("the fast lane took none of the calls")
	}
}

// TestRoutingToItsCaller: over one serve --http, client A calls server x,
// whose tool asks A's user; meanwhile client B's call to server y is in
// flight, and began after A's. Only A is asked, and the form names x; A's
// answer goes back into A's call. On main, B was asked, and answered for A.
func TestRoutingToItsCaller(t *testing.T) {
	eachDoor(t, func(t *testing.T, d door, via string) {
		g, url := routingGateway(t, d, "x", "y")
		a, b := newWitness("A"), newWitness("B")
		ca, cb := a.dial(t, url, d.version), b.dial(t, url, d.version)
		if d.lane {
			warmLane(t, g, ca)
			warmLane(t, g, cb)
		}
		before := g.fastCalls()
		for _, kind := range []string{"ask", "sample"} {
			ga, gb := openGate(t), openGate(t)
			resA := async(t.Context(), ca, via, "x", "gated", map[string]any{"kind": kind, "message": "A: approve the wire transfer?", "gate": ga.Addr()})
			ha := accept(t, ga) // A's call to x is in flight
			resB := async(t.Context(), cb, via, "y", "gated", map[string]any{"kind": "log", "message": "B: working", "gate": gb.Addr()})
			hb := accept(t, gb) // so is B's call to y, which began last
			outA := release(t, ha)
			want := map[string]string{"ask": `accept: {"answer":"A"}`, "sample": "model: A"}[kind]
			if outA != want {
				t.Errorf("%s: x got %q from its caller, want %q", kind, outA, want)
			}
			if out := release(t, hb); out != "logged" {
				t.Errorf("y's log message: %q", out)
			}
			if out := <-resA; !strings.Contains(out, want) {
				t.Errorf("%s: A's call answered %q, want %q in it", kind, out, want)
			}
			<-resB
		}
		seenA := a.saw()
		wantA := []string{`elicit: [server "x" asks] A: approve the wire transfer?`,
			`sample: This request comes from the MCP server "x", through Switchboard. | [server "x" asks] A: approve the wire transfer?`}
		for _, w := range wantA {
			if !contains(seenA, w) {
				t.Errorf("A was not asked %q; A saw %q", w, seenA)
			}
		}
		for _, s := range b.saw() {
			if !strings.HasPrefix(s, "log: B:") {
				t.Errorf("B saw %q, which is not its own", s)
			}
		}
		for _, s := range seenA {
			if strings.Contains(s, "B:") {
				t.Errorf("A saw %q, which is B's", s)
			}
		}
		checkLane(t, g, d, before)
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestRoutingTwoCallersRefused: A and B both have a call to x in flight
// when x asks: nothing tells whose request it is, so x is refused, with the
// reason, and neither client is asked. On main, the client whose call began
// last was asked.
func TestRoutingTwoCallersRefused(t *testing.T) {
	n := 0
	eachDoor(t, func(t *testing.T, d door, via string) {
		g, url := routingGateway(t, d, "x")
		a, b := newWitness("A"), newWitness("B")
		ca, cb := a.dial(t, url, d.version), b.dial(t, url, d.version)
		if d.lane {
			warmLane(t, g, ca)
			warmLane(t, g, cb)
		}
		before := g.fastCalls()
		for _, kind := range []string{"ask", "sample"} {
			n++
			group := fmt.Sprintf("g%d", n)
			resA := async(t.Context(), ca, via, "x", "together", map[string]any{"kind": kind, "message": "A: yours?", "n": 2, "group": group})
			resB := async(t.Context(), cb, via, "x", "together", map[string]any{"kind": kind, "message": "B: yours?", "n": 2, "group": group})
			for who, res := range map[string]<-chan string{"A": resA, "B": resB} {
				out := <-res
				if !strings.Contains(out, "switchboard refused the") || !strings.Contains(out, `calls to "x" from 2 client sessions are in flight`) {
					t.Errorf("%s: %s's call answered %q, want x refused for two callers", kind, who, out)
				}
			}
		}
		if s := a.saw(); len(s) > 0 {
			t.Errorf("A was asked %q", s)
		}
		if s := b.saw(); len(s) > 0 {
			t.Errorf("B was asked %q", s)
		}
		checkLane(t, g, d, before)
	})
}

// TestRoutingSpontaneous: a server that asks with no call to it in flight
// is refused, even while calls to another server are in flight (A's and
// B's, to y), and whichever client called it before (A). On main, the
// client whose call began last was asked.
func TestRoutingSpontaneous(t *testing.T) {
	eachDoor(t, func(t *testing.T, d door, via string) {
		_, url := routingGateway(t, d, "x", "y")
		a, b := newWitness("A"), newWitness("B")
		ca, cb := a.dial(t, url, d.version), b.dial(t, url, d.version)
		for _, kind := range []string{"ask", "sample"} {
			gx, gy := openGate(t), openGate(t)
			if out, err := callVia(t.Context(), ca, via, "x", "after", map[string]any{"kind": kind, "message": "A: out of the blue", "gate": gx.Addr()}); err != nil || !strings.Contains(out, "armed") {
				t.Fatalf("arming x: %q %v", out, err)
			}
			hx := accept(t, gx)
			resA := async(t.Context(), ca, via, "y", "gated", map[string]any{"kind": "log", "message": "A: y", "gate": gy.Addr()})
			hA := accept(t, gy)
			resB := async(t.Context(), cb, via, "y", "gated", map[string]any{"kind": "log", "message": "B: y", "gate": gy.Addr()})
			hB := accept(t, gy)
			if out := release(t, hx); !strings.Contains(out, "switchboard refused the") || !strings.Contains(out, `no client call to "x" is in flight`) {
				t.Errorf("%s: x asking on its own got %q, want it refused", kind, out)
			}
			release(t, hA)
			release(t, hB)
			<-resA
			<-resB
		}
		for w, seen := range map[string][]string{"A": a.saw(), "B": b.saw()} {
			for _, s := range seen {
				if !strings.HasPrefix(s, "log: ") {
					t.Errorf("%s was asked %q", w, s)
				}
			}
		}
	})
}

// TestRoutingLogNeverToStrangers: a log message x sends with no call to it
// in flight goes to the client that called x last (A), never to a client
// that never used x (B), whose call to y is in flight and began last. On
// main, B got it.
func TestRoutingLogNeverToStrangers(t *testing.T) {
	eachDoor(t, func(t *testing.T, d door, via string) {
		if d.version != "2025-11-25" {
			t.Skip("a 2026-07-28 client is sent log messages only within its own requests")
		}
		_, url := routingGateway(t, d, "x", "y")
		a, b := newWitness("A"), newWitness("B")
		ca, cb := a.dial(t, url, d.version), b.dial(t, url, d.version)
		gx, gy := openGate(t), openGate(t)
		if out, err := callVia(t.Context(), ca, via, "x", "after", map[string]any{"kind": "log", "message": "A: x's news", "gate": gx.Addr()}); err != nil || !strings.Contains(out, "armed") {
			t.Fatalf("arming x: %q %v", out, err)
		}
		hx := accept(t, gx)
		resB := async(t.Context(), cb, via, "y", "gated", map[string]any{"kind": "log", "message": "B: y", "gate": gy.Addr()})
		hB := accept(t, gy)
		if out := release(t, hx); out != "logged" {
			t.Fatalf("x's log message: %q", out)
		}
		// Someone gets it: wait, then see who.
		isX := func(s string) bool { return strings.Contains(s, "x's news") }
		got := make(chan string, 2)
		for name, w := range map[string]*witness{"A": a, "B": b} {
			go func() {
				if w.waitFor(t.Context(), isX) {
					got <- name
				}
			}()
		}
		if who := <-got; who != "A" {
			t.Errorf("x's log message went to %s, which never called x", who)
		}
		release(t, hB)
		<-resB
		for _, s := range b.saw() {
			if isX(s) {
				t.Errorf("B saw %q", s)
			}
		}
	})
}

// TestRoutingAcceptance is issue 27's acceptance test of routing: two
// clients on one serve --http, A on 2025-11-25 (the fast lane takes its
// calls) and B on the newest revision (multi round-trip), make 1,000
// interleaved calls, through the mcp tool and direct tools, of tools that
// elicit, sample and log with the caller's own marker: on a server both
// use (x) and on one each uses alone (ya, yb). Neither client ever sees
// the other's elicitation, sampling or log message; every answer goes back
// into the call of the client that gave it; on a server only one client
// uses, nothing is refused; on the shared one, a request is answered by its
// own caller or refused, never answered by the other.
func TestRoutingAcceptance(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	const total, workers = 1000, 2 // workers per client
	lane := door{"fast lane", true, "2025-11-25"}
	g, url := routingGateway(t, lane, "x", "ya", "yb")
	clients := []struct {
		w       *witness
		version string
		own     string
	}{{newWitness("A"), "2025-11-25", "ya"}, {newWitness("B"), "", "yb"}}
	type tally struct {
		mu                  sync.Mutex
		answered, refused   int
		ownLogs, sharedLogs int
	}
	var tallies [2]tally
	var wg sync.WaitGroup
	before := g.fastCalls()
	for ci, c := range clients {
		cs := c.w.dial(t, url, c.version)
		if c.version != "" {
			warmLane(t, g, cs)
		}
		for wk := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range total / len(clients) / workers {
					server := []string{"x", c.own}[i%2]
					kind := []string{"ask", "sample", "log"}[(i/2)%3]
					via := []string{"mcp", "direct"}[(i/6)%2]
					marker := fmt.Sprintf("%s:%s:%d:%d", c.w.name, server, wk, i)
					out, err := callVia(t.Context(), cs, via, server, "do", map[string]any{"kind": kind, "message": marker})
					if err != nil {
						t.Errorf("%s: %v", marker, err)
						return
					}
					want := map[string]string{"ask": fmt.Sprintf(`accept: {"answer":%q}`, c.w.name), "sample": "model: " + c.w.name, "log": "logged"}[kind]
					tl := &tallies[ci]
					tl.mu.Lock()
					switch {
					case strings.Contains(out, want):
						tl.answered++
						if kind == "log" && server == c.own {
							tl.ownLogs++
						}
					case server == "x" && strings.Contains(out, `switchboard refused the`) && strings.Contains(out, `calls to "x" from 2 client sessions are in flight`):
						tl.refused++
					default:
						t.Errorf("%s (%s via %s): the call answered %q, want %q", marker, kind, via, out, want)
					}
					tl.mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	checkLane(t, g, lane, before)
	for ci, c := range clients {
		name := c.w.name
		for _, s := range c.w.saw() {
			// What it saw is its own (its name first in the marker), and
			// names the server the marker says it came from.
			kind, rest, _ := strings.Cut(s, ": ")
			switch kind {
			case "elicit", "sample":
				if kind == "sample" {
					_, rest, _ = strings.Cut(rest, " | ")
				}
				label, marker, _ := strings.Cut(rest, "] ")
				parts := strings.Split(marker, ":")
				if len(parts) != 4 || parts[0] != name || label != fmt.Sprintf("[server %q asks", parts[1]) {
					t.Errorf("%s saw %q", name, s)
				}
			case "log":
				if !strings.HasPrefix(rest, name+":") {
					t.Errorf("%s saw %q", name, s)
				}
			default:
				t.Errorf("%s saw %q", name, s)
			}
		}
		tl := &tallies[ci]
		t.Logf("%s: %d calls answered by their caller, %d refused (two callers of x in flight)", name, tl.answered, tl.refused)
	}
	if t.Failed() {
		return
	}
	// A's log messages from the server it alone uses reach it, on the
	// call's own response or after it.
	own := func(s string) bool { return strings.HasPrefix(s, "log: A:ya:") }
	for {
		n := 0
		for _, s := range clients[0].w.saw() {
			if own(s) {
				n++
			}
		}
		if n >= tallies[0].ownLogs {
			break
		}
		clients[0].w.mu.Lock()
		ch := clients[0].w.changed
		clients[0].w.mu.Unlock()
		<-ch
	}
}

// TestRoutingLoginURL: a login URL goes only to the client whose call
// needs the login. A's call to api needs one, and A cannot open URLs; B,
// which can, has a call to y in flight, begun last: B is not sent A's
// login URL (on main it was), and A's call fails with needs-auth, saying
// why. Then A, able to open URLs now, gets it, naming the server, and B
// still nothing.
func TestRoutingLoginURL(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	as := oauthtest.New(t, oauthtest.Options{})
	d := config.Dirs{Home: t.TempDir()}
	y := routerDef()
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"api": map[string]any{"url": as.URL()}, "y": y}})
	os.MkdirAll(filepath.Dir(d.UserFile()), 0o755)
	if err := os.WriteFile(d.UserFile(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := New(t.Context(), config.Load(d), &Options{Engine: switchboard.Options{SpillDir: filepath.Join(d.Home, "spill"),
		Credentials: credstore.NewFile(filepath.Join(d.Home, "credentials"))}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	g := &testGateway{srv: srv}
	url := g.serveHTTP(t, HTTPOptions{}).URL + "/mcp"

	urls := func(w *witness, follow bool) *mcp.ClientOptions {
		o := w.options()
		o.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}}
		form := o.ElicitationHandler
		o.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Mode != "url" {
				return form(ctx, req)
			}
			w.note("url: " + req.Params.Message)
			if follow {
				if _, err := oauthtest.Follow(ctx, req.Params.URL); err != nil { // the user's browser approves
					return nil, err
				}
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		}
		return o
	}
	dial := func(o *mcp.ClientOptions) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "witness", Version: "1"}, o).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	a, b := newWitness("A"), newWitness("B")
	ca, cb := dial(a.options()), dial(urls(b, true))
	echo := map[string]any{"text": "hi"}

	gy := openGate(t)
	resB := async(t.Context(), cb, "mcp", "y", "gated", map[string]any{"kind": "log", "message": "B: y", "gate": gy.Addr()})
	hB := accept(t, gy)
	out, err := callVia(t.Context(), ca, "mcp", "api", "echo", echo)
	if err != nil || !strings.Contains(out, "needs-auth") || !strings.Contains(out, `the client whose call to "api" is in flight did not declare URL elicitation`) {
		t.Errorf("A's call needing a login it cannot open: %q %v", out, err)
	}
	release(t, hB)
	<-resB

	a2 := newWitness("A2")
	ca2 := dial(urls(a2, true))
	resB = async(t.Context(), cb, "mcp", "y", "gated", map[string]any{"kind": "log", "message": "B: y", "gate": gy.Addr()})
	hB = accept(t, gy)
	if out, err := callVia(t.Context(), ca2, "mcp", "api", "echo", echo); err != nil || out != "hi" {
		t.Errorf("A's call after its login: %q %v", out, err)
	}
	release(t, hB)
	<-resB
	if seen := a2.saw(); len(seen) != 1 || seen[0] != `url: [server "api" needs a login] Log in to api to go on: Switchboard needs your authorization to use it.` {
		t.Errorf("A was sent %q, want one login URL naming api", seen)
	}
	for _, s := range b.saw() {
		if strings.HasPrefix(s, "url: ") {
			t.Errorf("B, whose calls were to y, was sent %q", s)
		}
	}
}

// TestRoutingNamesServerOverStdio: serve over stdio has one client, whose
// calls reach the gateway through go-sdk's server as here (in memory):
// what a server asks during its call reaches the client naming it, at
// 2025-11-25 and as a multi round-trip input request.
func TestRoutingNamesServerOverStdio(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"x": routerDef()}, nil)
	for _, version := range []string{"2025-11-25", ""} {
		w := newWitness("A")
		cs := g.connectAt(t, w.options(), version)
		for _, via := range []string{"mcp", "direct"} {
			out, err := callVia(t.Context(), cs, via, "x", "do", map[string]any{"kind": "ask", "message": "A: may I?"})
			if err != nil || !strings.Contains(out, `accept: {"answer":"A"}`) {
				t.Errorf("version %q via %s: %q %v", version, via, out, err)
			}
		}
		if seen := w.saw(); len(seen) != 2 || seen[0] != `elicit: [server "x" asks] A: may I?` || seen[1] != seen[0] {
			t.Errorf("version %q: the client saw %q", version, seen)
		}
	}
}
