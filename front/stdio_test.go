package front

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// brackets is what a prompt-injected model can put in a tool call's
// arguments: n levels of nesting, in 2n bytes.
func brackets(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// stdioPeer is a client's end of a StdioTransport: lines written, lines
// read.
type stdioPeer struct {
	in   *io.PipeWriter
	out  *bufio.Scanner
	init map[string]any // the answer to initialize
}

func (p *stdioPeer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatalf("writing to the server: %v", err)
	}
}

// recv reads the next message from the server.
func (p *stdioPeer) recv(t *testing.T) map[string]any {
	t.Helper()
	if !p.out.Scan() {
		t.Fatalf("the server's output ended: %v", p.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(p.out.Bytes(), &m); err != nil {
		t.Fatalf("the server wrote %q: %v", p.out.Bytes(), err)
	}
	return m
}

// serveStdio connects srv to a new peer over a StdioTransport bounded at
// limit bytes, and initializes the session at version.
func serveStdio(t *testing.T, srv *mcp.Server, limit int, version string) *stdioPeer {
	t.Helper()
	return serveStdioWith(t, srv, &StdioTransport{MaxMessageBytes: limit}, version)
}

// serveStdioWith is serveStdio over a transport of the caller's, its
// Reader and Writer set here.
func serveStdioWith(t *testing.T, srv *mcp.Server, tr *StdioTransport, version string) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tr.Reader, tr.Writer = inR, outW
	ss, err := srv.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		// A session that ends closes the client's pipes: send and recv
		// fail then.
		ss.Wait()
		inR.CloseWithError(errors.New("the session ended"))
		outW.CloseWithError(errors.New("the session ended"))
		close(done)
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		ss.Close()
		<-done
	})
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 64<<20)
	p := &stdioPeer{in: inW, out: sc}
	p.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	if p.init = p.recv(t); p.init["result"] == nil {
		t.Fatalf("initialize: %v", p.init)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

// TestStdioRefusesAlone sends the gateway, over stdio, messages go-sdk's
// stdio transport cannot take, each of which ended the session (and serve)
// before: each request is answered with an error giving the reason, and
// the session goes on.
func TestStdioRefusesAlone(t *testing.T) {
	g := newGateway(t, map[string]def{"f": fixture()}, nil)
	const limit = 64 << 10
	p := serveStdio(t, g.srv.MCP(), limit, "2025-06-18")
	big := strings.Repeat("x", limit)
	for _, tc := range []struct {
		name, line string
		id         any
		code       float64
		reason     string
	}{
		{"deep arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp","arguments":{"search":` + brackets(1000) + `}}}`,
			1.0, -32600, "nests deeper than 1000 levels"},
		{"deep arguments, id last", `{"method":"tools/call","params":{"name":"mcp","arguments":{"search":` + brackets(5000) + `}},"jsonrpc":"2.0","id":"last"}`,
			"last", -32600, "nests deeper than 1000 levels"},
		{"too large", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp","arguments":{"search":"` + big + `"}}}`,
			2.0, -32600, fmt.Sprintf("larger than %d bytes", limit)},
		{"too large, id last", `{"method":"tools/call","params":{"name":"mcp","arguments":{"search":"` + big + `"}},"jsonrpc":"2.0","id":3}`,
			3.0, -32600, fmt.Sprintf("larger than %d bytes", limit)},
		{"not JSON", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":`,
			4.0, -32700, "not valid JSON"},
		{"not JSON-RPC", `{"jsonrpc":"1.0","id":5,"method":"tools/list"}`,
			5.0, -32600, "not a JSON-RPC 2.0 message"},
		{"a batch after 2025-06-18", `[{"jsonrpc":"2.0","id":6,"method":"tools/list"}]`,
			nil, 0, ""},
		{"an empty batch", `[]`, nil, 0, ""},
		{"not an object", `42`, nil, 0, ""},
		{"garbage", `}}}{{{`, nil, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.send(t, tc.line)
			if tc.id != nil {
				m := p.recv(t)
				e, _ := m["error"].(map[string]any)
				if m["id"] != tc.id || e == nil || e["code"] != tc.code || !strings.Contains(fmt.Sprint(e["message"]), tc.reason) {
					t.Fatalf("got %v, want an error for id %v, code %v, saying %q", m, tc.id, tc.code, tc.reason)
				}
			}
			// The session goes on.
			p.send(t, `{"jsonrpc":"2.0","id":"next","method":"tools/list"}`)
			if m := p.recv(t); m["id"] != "next" || m["result"] == nil {
				t.Fatalf("after the refusal: got %v, want the tools", m)
			}
		})
	}
}

// TestStdioRefusesAnswer sends, over stdio, an answer to the server's
// request that nests too deeply: the server's request fails at once with
// the reason, instead of waiting for an answer that never comes, and the
// session goes on.
func TestStdioRefusesAnswer(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asks", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		_, err := req.Session.ListRoots(ctx, nil)
		return textResult(fmt.Sprintf("listing roots: %v", err)), nil, nil
	})
	p := serveStdio(t, srv, 0, "2025-06-18")
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"roots","arguments":{}}}`)
	ask := p.recv(t)
	if ask["method"] != "roots/list" {
		t.Fatalf("got %v, want roots/list", ask)
	}
	id, _ := json.Marshal(ask["id"])
	p.send(t, `{"result":{"roots":`+brackets(2000)+`},"jsonrpc":"2.0","id":`+string(id)+`}`)
	m := p.recv(t)
	got := fmt.Sprint(m["result"])
	if m["id"] != 1.0 || !strings.Contains(got, "switchboard refused the client's answer: the message nests deeper than 1000 levels") {
		t.Fatalf("got %v, want the call's result saying the answer was refused", m)
	}
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if m := p.recv(t); m["id"] != 2.0 || m["result"] == nil {
		t.Fatalf("after the refusal: got %v, want the tools", m)
	}
}

// TestStdioBatches checks that batches still pass at a protocol version
// that has them, and that one repeating a request id still in flight,
// which go-sdk would end the session for, is refused alone.
func TestStdioBatches(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "b", Version: "1"}, nil)
	gate := make(chan struct{})
	mcp.AddTool(srv, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		select {
		case <-gate:
			return textResult("waited"), nil, nil
		case <-ctx.Done(): // the session ended
			return nil, nil, ctx.Err()
		}
	})
	p := serveStdio(t, srv, 0, "2025-03-26")
	p.send(t, `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait","arguments":{}}}]`)
	p.send(t, `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`) // id 1 is in flight in a batch
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if m := p.recv(t); m["id"] != 2.0 || m["result"] == nil {
		t.Fatalf("got %v, want the tools", m)
	}
	close(gate)
	if !p.out.Scan() || !bytes.HasPrefix(p.out.Bytes(), []byte(`[{"jsonrpc":"2.0","id":1,"result"`)) {
		t.Fatalf("got %s, want the batch's answer", p.out.Bytes())
	}
	// Its id is free again.
	p.send(t, `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`)
	if !p.out.Scan() || !bytes.HasPrefix(p.out.Bytes(), []byte(`[{"jsonrpc":"2.0","id":1,"result"`)) {
		t.Fatalf("got %s, want the batch's answer", p.out.Bytes())
	}
}

// FuzzStdioTransport holds the stdio transport to its promise: whatever a
// client writes, go-sdk's connection behind it reads messages until the
// input ends, and never fails (which would end the session).
func FuzzStdioTransport(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":` + brackets(999) + `}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":` + brackets(1000) + `}`,
		`[{"jsonrpc":"2.0","id":1,"method":"x","params":` + brackets(998) + `}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"x"},{"jsonrpc":"2.0","id":1,"method":"y"}]`,
		"[]\n[1]\n{}\n\"x\"\n{\"id\":1}{\"id\":2}\n",
		`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"a\":\"\xff\"}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		conn, err := (&StdioTransport{Reader: bytes.NewReader(in), Writer: io.Discard, MaxMessageBytes: 4 << 10}).Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for {
			if _, err := conn.Read(t.Context()); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("the connection failed: %v", err)
				}
				return
			}
		}
	})
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
