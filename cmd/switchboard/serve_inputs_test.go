package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestServeStdioDeepArguments sends switchboard serve, over stdio, a call of
// the mcp tool whose arguments nest 1,000 levels deep (2 KB of brackets, as
// a prompt-injected model can write), then messages that are too large and
// not JSON: serve answers each with an error giving the reason, goes on
// serving, and ends cleanly when its input does. It used to exit with
// status 1 at the first.
func TestServeStdioDeepArguments(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := serveHome(t, map[string]any{"f": fixtureServer(testserver.Good)}, nil)
	cmd := switchboardCmd(t, home, "serve")
	cmd.Stderr = testLog{t}
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
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out := bufio.NewScanner(stdout)
	out.Buffer(nil, 32<<20)
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("writing to serve: %v", err)
		}
	}
	// recv returns the next response; notifications (the prompts of
	// servers the search indexed, say) are skipped, as a client would.
	recv := func() map[string]any {
		t.Helper()
		for {
			if !out.Scan() {
				t.Fatalf("serve's output ended: %v", out.Err())
			}
			var m map[string]any
			if err := json.Unmarshal(out.Bytes(), &m); err != nil {
				t.Fatalf("serve wrote %.200q: %v", out.Bytes(), err)
			}
			if _, ok := m["id"]; ok {
				return m
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := recv(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	deep := strings.Repeat("[", 1000) + strings.Repeat("]", 1000)
	huge := strings.Repeat("x", 17<<20) // over go-sdk's 16 MiB, which serve keeps
	for i, tc := range []struct{ line, reason string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp","arguments":{"search":` + deep + `}}}`, "nests deeper than 1000 levels"},
		{`{"method":"tools/call","params":{"name":"mcp","arguments":{"search":"` + huge + `"}},"jsonrpc":"2.0","id":2}`, "larger than 16777216 bytes"},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp",`, "not valid JSON"},
	} {
		send(tc.line)
		m := recv()
		e, _ := m["error"].(map[string]any)
		if m["id"] != float64(i+1) || e == nil || !strings.Contains(fmt.Sprint(e["message"]), tc.reason) {
			t.Fatalf("got %.300v, want an error for id %d saying %q", m, i+1, tc.reason)
		}
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"after-%d","method":"tools/call","params":{"name":"mcp","arguments":{"search":"echo"}}}`, i+1))
		if m := recv(); m["result"] == nil {
			t.Fatalf("a call after the refusal: got %.300v, want a result", m)
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve ended with %v, want a clean end when its input does", err)
	}
}
