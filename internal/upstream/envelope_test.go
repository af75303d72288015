package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

var envelopeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":3}}}`,
	`{"method":"notifications/progress","params":{"progressToken":3,"progress":1},"jsonrpc":"2.0"}`,
	`{"result":{},"jsonrpc":"2.0","id":7}`,
	` { "jsonrpc" : "2.0" , "id" : -12 , "result" : [ 1 , {"a":"}"} ] } `,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}`,
	`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`,
	`{"jsonrpc":"2.0","\u0069d":1,"result":{}}`,
	`{"jsonrpc":"2.0","ID":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":"\u00e9","method":"m"}`,
	`{"jsonrpc":"2.0","method":"m","params":null}`,
	`{"jsonrpc":"2.0","method":null}`,
	`{"jsonrpc":"2.0","id":99999999999999999999,"result":{}}`,
	`{"jsonrpc":"1.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","result":{"x":1}}`,
	`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
	`{}`,
}

// FuzzScanEnvelope checks scanEnvelope against go-sdk's own decoder: for
// every line the line reader passes on (valid JSON), a message the scanner
// reads is the message jsonrpc.DecodeMessage reads, id, method, params and
// result alike; and the scanner never reads a line the decoder refuses.
func FuzzScanEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := scanEnvelope(line)
		if !ok || !json.Valid(line) {
			return
		}
		want, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			t.Fatalf("scanned %s, which go-sdk refuses: %v", line, err)
		}
		if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }), cmp.Comparer(func(a, b jsonrpc.ID) bool { return a == b })); diff != "" {
			t.Fatalf("scanning %s (-go-sdk +scanner):\n%s", line, diff)
		}
	})
}

// TestScanEnvelope pins which seeds take the scanner and which are left to
// go-sdk's decoder.
func TestScanEnvelope(t *testing.T) {
	scanned := map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true, 16: true}
	for i, s := range envelopeSeeds {
		if _, ok := scanEnvelope([]byte(s)); ok != scanned[i] {
			t.Errorf("scanEnvelope(%s) ok = %v, want %v", s, ok, scanned[i])
		}
	}
}

// TestStdioConnScans runs go-sdk's client over a stdioConn to a real go-sdk
// server and proves that every message of the session, a tool call and a
// notification included, took the scanner, not go-sdk's decoder.
func TestStdioConnScans(t *testing.T) {
	path, args, env := testserver.Command(testserver.Good)
	cmd := exec.Command(path, args...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Wait() })
	conn := newStdioConn(newLineReader(stdout, DefaultMaxMessageBytes, slog.New(slog.DiscardHandler)), stdin, nil)
	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(t.Context(), connTransport{conn}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*mcp.TextContent).Text; got != "hi" {
		t.Errorf("echo = %q, want hi", got)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "add-tool", Arguments: map[string]any{"text": "new"}}); err != nil {
		t.Fatal(err)
	}
	<-changed // a notification from the server, read by the scanner too
	if n := conn.decoded.Load(); n != 0 {
		t.Errorf("%d messages went to go-sdk's decoder, want none", n)
	}
	if n := conn.scanned.Load(); n < 4 {
		t.Errorf("%d messages scanned, want the initialize and two tools/call responses and a notification at least", n)
	}
}

type discardCloser struct{ io.Writer }

func (discardCloser) Close() error { return nil }

// TestStdioConnRead reads what a server may write: a batch (protocols
// before 2025-06-18), a message the scanner leaves to go-sdk's decoder (an
// error response), and plain messages, in order; then the end of output.
func TestStdioConnRead(t *testing.T) {
	in := `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"ping","id":"p"}]` + "\n" +
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no such method"}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"result":{"content":[]}}` + "\n"
	conn := newStdioConn(newLineReader(strings.NewReader(in), DefaultMaxMessageBytes, slog.New(slog.DiscardHandler)), discardCloser{io.Discard}, nil)
	defer conn.Close()
	id := func(v any) jsonrpc.ID { i, _ := jsonrpc.MakeID(v); return i }
	want := []jsonrpc.Message{
		&jsonrpc.Response{ID: id(float64(1)), Result: json.RawMessage(`{}`)},
		&jsonrpc.Request{ID: id("p"), Method: "ping"},
		&jsonrpc.Response{ID: id(float64(2)), Error: &jsonrpc.Error{Code: -32601, Message: "no such method"}},
		&jsonrpc.Response{ID: id(float64(3)), Result: json.RawMessage(`{"content":[]}`)},
	}
	for i, w := range want {
		got, err := conn.Read(t.Context())
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if diff := cmp.Diff(w, got, cmp.Comparer(func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }), cmp.Comparer(func(a, b jsonrpc.ID) bool { return a == b })); diff != "" {
			t.Errorf("message %d (-want +got):\n%s", i, diff)
		}
	}
	if _, err := conn.Read(t.Context()); !errors.Is(err, io.EOF) {
		t.Errorf("after the last line: %v, want EOF", err)
	}
	if s, d := conn.scanned.Load(), conn.decoded.Load(); s != 1 || d != 2 {
		t.Errorf("scanned %d, decoded %d lines; want 1 and 2 (the batch and the error)", s, d)
	}
}
