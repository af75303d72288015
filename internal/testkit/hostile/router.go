package hostile

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewRouter returns a server that tests how a gateway routes what servers
// send toward clients: the tools of [NewAsker], and tools that ask the
// client (kind "ask": elicitation; "sample": sampling; "log": a log
// message, sent whatever level the client set, as a hostile server may)
// when a test says so:
//
//   - "do" {kind, message}: during its call, at once.
//   - "gated" {kind, message, gate}: during its call, once the test releases
//     it through gate (see [Gate]); it answers with the outcome, and writes
//     it to the gate too.
//   - "after" {kind, message, gate}: answers "armed" at once; once the test
//     releases it, after the call, it asks on its own (a spontaneous request
//     of the server) and writes the outcome to the gate.
//   - "together" {kind, message, n, group}: waits until n calls of the same
//     group are in flight, asks, and answers only once all n have asked, so
//     that every request comes while all n calls are in flight.
//
// An outcome is "accept: {content}" (or another action) for "ask", "model:
// text" for "sample", "logged" for "log", or "error: …".
//
// It runs over stdio (mode [Router]); connect returns the connection it is
// to write its log messages on.
func NewRouter(conn func() mcp.Connection) *mcp.Server {
	s := NewAsker()
	r := &router{conn: conn, groups: map[string]*group{}}
	type doArgs struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "do", Description: "Asks the client (ask, sample, log) during its call."},
		func(ctx context.Context, req *mcp.CallToolRequest, a doArgs) (*mcp.CallToolResult, any, error) {
			return text(r.ask(ctx, req.Session, a.Kind, a.Message)), nil, nil
		})
	type gateArgs struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
		Gate    string `json:"gate"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "gated", Description: "Asks the client during its call once the test releases it."},
		func(ctx context.Context, req *mcp.CallToolRequest, a gateArgs) (*mcp.CallToolResult, any, error) {
			c, err := waitGate(ctx, a.Gate)
			if err != nil {
				return text("error: " + err.Error()), nil, nil
			}
			defer c.Close()
			out := r.ask(ctx, req.Session, a.Kind, a.Message)
			fmt.Fprintln(c, out)
			return text(out), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "after", Description: "Asks the client after its call has been answered, once the test releases it."},
		func(ctx context.Context, req *mcp.CallToolRequest, a gateArgs) (*mcp.CallToolResult, any, error) {
			ss := req.Session
			go func() {
				// On its own: the call has ended by the time it asks.
				ctx := context.Background()
				c, err := waitGate(ctx, a.Gate)
				if err != nil {
					return
				}
				defer c.Close()
				fmt.Fprintln(c, r.ask(ctx, ss, a.Kind, a.Message))
			}()
			return text("armed"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "together", Description: "Asks the client while n calls of a group are in flight."},
		func(ctx context.Context, req *mcp.CallToolRequest, a struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
			N       int    `json:"n"`
			Group   string `json:"group"`
		}) (*mcp.CallToolResult, any, error) {
			g := r.group(a.Group, a.N)
			if err := g.arrive(ctx, &g.in); err != nil {
				return text("error: " + err.Error()), nil, nil
			}
			out := r.ask(ctx, req.Session, a.Kind, a.Message)
			if err := g.arrive(ctx, &g.asked); err != nil {
				return text("error: " + err.Error()), nil, nil
			}
			return text(out), nil, nil
		})
	return s
}

type router struct {
	conn func() mcp.Connection

	mu     sync.Mutex
	groups map[string]*group
}

// ask asks the client of ss for kind, with message, and returns the outcome.
func (r *router) ask(ctx context.Context, ss *mcp.ServerSession, kind, message string) string {
	switch kind {
	case "ask":
		res, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: message,
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}})
		if err != nil {
			return "error: " + oneLine(err.Error())
		}
		content, _ := json.Marshal(res.Content)
		return fmt.Sprintf("%s: %s", res.Action, content)
	case "sample":
		res, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 100,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: message}}}})
		if err != nil {
			return "error: " + oneLine(err.Error())
		}
		if t, ok := res.Content.(*mcp.TextContent); ok {
			return "model: " + oneLine(t.Text)
		}
		return fmt.Sprintf("model answered %T", res.Content)
	case "log":
		// Written as it is: go-sdk's ServerSession.Log would send nothing
		// until the client set a level, and a hostile server need not wait.
		params, _ := json.Marshal(&mcp.LoggingMessageParams{Level: "warning", Logger: "hostile", Data: message})
		conn := r.conn()
		if conn == nil {
			return "error: not connected"
		}
		if err := conn.Write(ctx, &jsonrpc.Request{Method: "notifications/message", Params: params}); err != nil {
			return "error: " + oneLine(err.Error())
		}
		return "logged"
	}
	return fmt.Sprintf("error: unknown kind %q", kind)
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// A group is the calls of "together" that wait for each other.
type group struct {
	n         int
	mu        sync.Mutex
	in, asked int
	changed   chan struct{} // closed and replaced when in or asked grows
}

func (r *router) group(name string, n int) *group {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.groups[name]
	if g == nil {
		g = &group{n: n, changed: make(chan struct{})}
		r.groups[name] = g
	}
	return g
}

// arrive counts one more call at the step *count counts, and waits until
// all n are there.
func (g *group) arrive(ctx context.Context, count *int) error {
	g.mu.Lock()
	*count++
	close(g.changed)
	g.changed = make(chan struct{})
	for *count < g.n {
		ch := g.changed
		g.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		g.mu.Lock()
	}
	g.mu.Unlock()
	return nil
}

// waitGate connects to the test's gate and waits for the release.
func waitGate(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dialing the gate: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
		c.Close()
		return nil, fmt.Errorf("waiting at the gate: %w", err)
	}
	return c, nil
}

// A Gate is where a test holds the tools "gated" and "after" of
// [NewRouter]: each connects to it and waits until the test releases it.
// It listens on loopback.
type Gate struct {
	ln net.Listener
}

// OpenGate opens a gate. Close it when done.
func OpenGate() (*Gate, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &Gate{ln: ln}, nil
}

// Addr is the gate's address, the tools' "gate" argument.
func (g *Gate) Addr() string { return g.ln.Addr().String() }

// Close closes the gate.
func (g *Gate) Close() error { return g.ln.Close() }

// Accept waits until a tool is at the gate: its call is in flight (for
// "gated"), or armed (for "after").
func (g *Gate) Accept() (*Held, error) {
	c, err := g.ln.Accept()
	if err != nil {
		return nil, err
	}
	return &Held{c: c, r: bufio.NewReader(c)}, nil
}

// Held is a tool waiting at a gate.
type Held struct {
	c net.Conn
	r *bufio.Reader
}

// Release lets the tool ask, and returns the outcome it reports.
func (h *Held) Release() (string, error) {
	defer h.c.Close()
	if _, err := fmt.Fprintln(h.c, "go"); err != nil {
		return "", err
	}
	line, err := h.r.ReadString('\n')
	return strings.TrimSuffix(line, "\n"), err
}

// runRouter runs the router over stdio.
func runRouter(ctx context.Context) error {
	t := &tapTransport{inner: &mcp.StdioTransport{}}
	return NewRouter(t.current).Run(ctx, t)
}

// tapTransport keeps the connection it makes, for the router to write on.
type tapTransport struct {
	inner mcp.Transport
	mu    sync.Mutex
	conn  mcp.Connection
}

func (t *tapTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	t.mu.Lock()
	t.conn = c
	t.mu.Unlock()
	return c, err
}

func (t *tapTransport) current() mcp.Connection {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.conn
}
