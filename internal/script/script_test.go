package script

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// echoHost is a small host for the interpreter's own tests, honest about
// what it is: search finds one tool per word of the query, describe names
// the path, and call returns a result whose text is its arguments, a tool
// named "fail" answers with isError, "big" with a result of args.n bytes,
// "deny" is refused, and "hang" waits for its context and reports when
// it ended. The engine's real host is tested in package gateway and
// above, against real servers.
type echoHost struct {
	inflight atomic.Int32 // calls not yet returned
	mu       sync.Mutex
	calls    []string
	hung     chan error // "hang" sends its context's error here once it ends
}

func (h *echoHost) Search(ctx context.Context, q Query) (any, error) {
	var tools []map[string]any
	for _, w := range strings.Fields(q.Query) {
		tools = append(tools, map[string]any{"name": w, "server": "s"})
	}
	return map[string]any{"tools": tools}, nil
}

func (h *echoHost) Describe(ctx context.Context, path, server string) (any, error) {
	return map[string]any{"name": path, "server": server}, nil
}

func (h *echoHost) Call(ctx context.Context, path, server string, args map[string]any) (any, error) {
	h.inflight.Add(1)
	defer h.inflight.Add(-1)
	h.mu.Lock()
	h.calls = append(h.calls, path)
	h.mu.Unlock()
	b, _ := json.Marshal(args)
	res := map[string]any{"content": []any{map[string]any{"type": "text", "text": string(b)}}}
	switch path {
	case "fail":
		res["isError"] = true
		return res, &Error{Code: CodeToolError, Message: "it failed"}
	case "deny":
		return nil, &Error{Code: "denied", Message: "the user denied the call"}
	case "big":
		n, _ := args["n"].(float64)
		res["content"] = []any{map[string]any{"type": "text", "text": strings.Repeat("x", int(n))}}
	case "hang":
		<-ctx.Done()
		if h.hung != nil {
			h.hung <- ctx.Err()
		}
		return nil, ctx.Err()
	}
	return res, nil
}

func runScript(t *testing.T, h Host, src string, o *Options) *Answer {
	t.Helper()
	if h == nil {
		h = &echoHost{}
	}
	return Run(context.Background(), h, src, o)
}

// TestAnswers: the seed's API shape, await at the top, the last
// expression or return as the answer, console captured.
func TestAnswers(t *testing.T) {
	tests := []struct {
		name, src, want string
		logs            []string
	}{
		{"last expression", `1 + 2`, `3`, nil},
		{"return", `return {a: 1}`, `{"a":1}`, nil},
		{"no answer", `let x = 1;`, ``, nil},
		{"await call", `const r = await tools.call("echo", {a: 1}, {server: "s"}); r.ok && r.data.content[0].text`, `"{\"a\":1}"`, nil},
		{"search", `(await tools.search({query: "a b"})).data.tools.map(t => t.name)`, `["a","b"]`, nil},
		{"describe", `const d = await tools.describe({path: "x", server: "s"}); [d.ok, d.data.name, d.data.server]`, `[true,"x","s"]`, nil},
		{"tool error", `const r = await tools.call("fail", {}); [r.ok, r.error.code, r.error.message, r.data.isError]`, `[false,"tool_error","it failed",true]`, nil},
		{"host error", `const r = await tools.call("deny", {}); r`, `{"ok":false,"error":{"code":"denied","message":"the user denied the call"}}`, nil},
		{"bad call", `const r = await tools.call(); r.error.code`, `"invalid"`, nil},
		{"unknown field", `(await tools.search({query: "a", q: 1})).error.message`, `"tools.search({query, server?, limit?, offset?}): json: unknown field \"q\""`, nil},
		{"parallel", `const rs = await Promise.all([1,2,3].map(i => tools.call("echo", {i}))); rs.map(r => JSON.parse(r.data.content[0].text).i)`, `[1,2,3]`, nil},
		{"console", `console.log("a", 1, {b: 2}); console.error("e"); console.warn("w"); "done"`, `"done"`, []string{`a 1 {"b":2}`, "error: e", "warn: w"}},
		{"last in a block is no answer", `if (true) { 5 }`, ``, nil},
		{"function value", `(function f() {})`, ``, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := runScript(t, nil, tt.src, nil)
			if a.Err != nil {
				t.Fatalf("error %+v", a.Err)
			}
			if string(a.Value) != tt.want {
				t.Errorf("got %s, want %s", a.Value, tt.want)
			}
			if strings.Join(a.Logs, "\n") != strings.Join(tt.logs, "\n") {
				t.Errorf("logs %q, want %q", a.Logs, tt.logs)
			}
		})
	}
}

// TestErrors: a syntax error names line:col and the offending text; a
// throw its line:col, the first line's column being the script's own.
func TestErrors(t *testing.T) {
	tests := []struct {
		name, src, code string
		line, col       int
		msg             []string
	}{
		{"syntax", "let a = 1;\nlet b = ;", CodeSyntax, 2, 9, []string{"line 2:9", "let b = ;\n          ^"}},
		{"syntax first line", "let b = ;", CodeSyntax, 1, 9, []string{"line 1:9"}},
		{"unterminated", "if (x) {", CodeSyntax, 1, 9, []string{"line 1:"}},
		{"throw", "let a = 1;\n  throw new Error('boom')", CodeThrown, 2, 9, []string{"line 2:9", "boom"}},
		{"throw first line", "null.x", CodeThrown, 1, 6, []string{"line 1:6", "TypeError"}},
		{"throw in the last expression", "let a;\n  a.b", CodeThrown, 2, 5, []string{"line 2:5", "TypeError"}},
		{"throw after await", "await tools.call('echo', {});\nundefinedName", CodeThrown, 2, 1, []string{"line 2:1", "undefinedName is not defined"}},
		{"throw a string", "throw 'no'", CodeThrown, 0, 0, []string{"threw: no"}},
		{"never settles", "await new Promise(() => {})", CodeThrown, 0, 0, []string{"nothing resolves"}},
		{"cyclic answer", "const a = {}; a.a = a; a", CodeNoAnswer, 0, 0, []string{"cannot be written as JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := runScript(t, nil, tt.src, nil)
			if a.Err == nil {
				t.Fatalf("no error; answer %s", a.Value)
			}
			if a.Err.Code != tt.code || a.Err.Line != tt.line || a.Err.Col != tt.col {
				t.Errorf("got %s at %d:%d, want %s at %d:%d (%s)", a.Err.Code, a.Err.Line, a.Err.Col, tt.code, tt.line, tt.col, a.Err.Message)
			}
			for _, m := range tt.msg {
				if !strings.Contains(a.Err.Message, m) {
					t.Errorf("message %q does not say %q", a.Err.Message, m)
				}
			}
		})
	}
}

// TestNoIO: a script has no I/O of its own.
func TestNoIO(t *testing.T) {
	for _, name := range []string{"require", "process", "setTimeout", "setInterval", "fetch", "XMLHttpRequest", "Deno", "Bun", "module", "fs"} {
		a := runScript(t, nil, "typeof "+name, nil)
		if a.Err != nil || string(a.Value) != `"undefined"` {
			t.Errorf("typeof %s: %s %+v, want \"undefined\"", name, a.Value, a.Err)
		}
	}
}

// TestHostile: each hostile script is stopped with an error that names
// the bound, and nothing it started is left running.
func TestHostile(t *testing.T) {
	tests := []struct {
		name, src, code, msg string
		opts                 *Options
	}{
		{"infinite loop", `while (true) {}`, CodeTimeout, "deadline", &Options{Timeout: 200 * time.Millisecond}},
		{"infinite loop caught", `for (;;) { try { while (true) {} } catch (e) {} }`, CodeTimeout, "deadline", &Options{Timeout: 200 * time.Millisecond}},
		{"recursion", `function f(n) { return f(n + 1) + 1 } f(0)`, CodeThrown, "recursion", nil},
		{"huge string", `let s = 'x'; while (true) s += s;`, CodeMemory, "grew past", nil},
		{"huge array", `const a = []; while (true) a.push({x: a.length});`, CodeMemory, "grew past", nil},
		{"10000 calls", `for (let i = 0; i < 10000; i++) await tools.call("echo", {i})`, CodeCallLimit, "more than 100 tool calls", nil},
		{"10000 calls at once", `await Promise.all(Array.from({length: 10000}, (_, i) => tools.call("echo", {i})))`, CodeCallLimit, "more than 100 tool calls", nil},
		{"a result too large", `const r = await tools.call("big", {n: 2e6}); if (!r.ok) throw new Error(r.error.code + ": " + r.error.message)`, CodeThrown, "too_large", nil},
		{"results held", `const keep = []; for (let i = 0; i < 50; i++) keep.push(await tools.call("big", {n: 500000}))`, CodeMemory, "holds more than", &Options{MaxHeldBytes: 4 << 20}},
		{"console flood", `while (true) console.log("x".repeat(1000))`, CodeMemory, "holds more than", nil},
		{"await loop", `while (true) await null`, CodeTimeout, "deadline", &Options{Timeout: 200 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &echoHost{}
			a := runScript(t, h, tt.src, tt.opts)
			if a.Err == nil || a.Err.Code != tt.code || !strings.Contains(a.Err.Message, tt.msg) {
				t.Fatalf("got %+v, want code %s saying %q", a.Err, tt.code, tt.msg)
			}
			// Run waits for what it started: no inner call is still
			// running (the guard is waited for by Run itself).
			if n := h.inflight.Load(); n != 0 {
				t.Errorf("%d inner calls still running after Run returned", n)
			}
		})
	}
}

// TestCancel: cancelling the run's context stops the script and reaches
// its inner call in flight, before Run returns.
func TestCancel(t *testing.T) {
	h := &echoHost{hung: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	go func() {
		// The inner call is in flight once the host has it.
		for {
			h.mu.Lock()
			n := len(h.calls)
			h.mu.Unlock()
			if n > 0 {
				close(started)
				return
			}
			runtime.Gosched()
		}
	}()
	done := make(chan *Answer)
	go func() { done <- Run(ctx, h, `console.log("before"); await tools.call("hang", {}); "after"`, nil) }()
	<-started
	cancel()
	a := <-done
	if a.Err == nil || a.Err.Code != CodeCancelled {
		t.Fatalf("got %+v, want cancelled", a.Err)
	}
	select {
	case err := <-h.hung:
		if err == nil {
			t.Error("the inner call's context did not end")
		}
	default:
		t.Error("the inner call was still running when Run returned")
	}
	if fmt.Sprint(a.Logs) != "[before]" {
		t.Errorf("logs %q, want those before the cancellation", a.Logs)
	}
}
