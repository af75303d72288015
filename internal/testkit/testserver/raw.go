package testserver

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// A behaviour configures the raw JSON-RPC server.
type behaviour struct {
	noAnswer    bool // never answer anything
	exitOnProbe bool
	ignoreProbe bool
	modern      bool // answers server/discover; exits on initialize after it
	onlyModern  bool // answers initialize with an error: the version is not supported
	delay       bool // sleeps $SWITCHBOARD_TESTSERVER_DELAY before reading
	garbage     bool // junk lines before each message
	tools       func(cursor string) (tools []map[string]any, next string)
	call        func(w io.Writer, id json.RawMessage, name string) // nil: echo-like text

	discovered bool // state: server/discover was answered
}

var behaviours = map[string]behaviour{
	NoInit:      {noAnswer: true},
	ExitOnProbe: {exitOnProbe: true},
	IgnoreProbe: {ignoreProbe: true},
	SlowModern:  {modern: true, delay: true},
	OnlyModern:  {modern: true, onlyModern: true},
	Garbage:     {garbage: true},
	HugeLine:    {call: hugeCall},
	RepeatCursor: {tools: func(string) ([]map[string]any, string) {
		return toolList(1, 0), "same"
	}},
	ManyPages: {tools: func(cursor string) ([]map[string]any, string) {
		var n int
		fmt.Sscan(cursor, &n)
		return toolList(1, n), fmt.Sprint(n + 1)
	}},
	ManyTools: {tools: func(cursor string) ([]map[string]any, string) {
		var n int
		fmt.Sscan(cursor, &n)
		if n >= 10001 {
			return nil, ""
		}
		return toolList(1000, n), fmt.Sprint(n + 1000)
	}},
	UnsafeNames: {tools: func(string) ([]map[string]any, string) {
		names := []string{"", "bad\x01name", "bad\nname", strings.Repeat("n", 200), "good"}
		var out []map[string]any
		for _, n := range names {
			out = append(out, tool(n))
		}
		return out, ""
	}},
	UnknownContent: {call: func(w io.Writer, id json.RawMessage, _ string) {
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{"content": []any{
			map[string]any{"type": "text", "text": "before"},
			map[string]any{"type": "hologram", "data": "3d"},
			map[string]any{"type": "text", "text": "after"},
		}}})
	}},
}

func tool(name string) map[string]any {
	return map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}}
}

func toolList(n, from int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = tool(fmt.Sprintf("tool-%d", from+i))
	}
	return out
}

// hugeCall answers with a 20 MB line, the id first ("big-first") or last
// ("big-last", as the TypeScript SDK writes it).
func hugeCall(w io.Writer, id json.RawMessage, name string) {
	big := strings.Repeat("x", 20<<20)
	var line string
	switch name {
	case "big-first":
		line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`, id, big)
	case "big-last":
		line = fmt.Sprintf(`{"result":{"content":[{"type":"text","text":"%s"}]},"jsonrpc":"2.0","id":%s}`, big, id)
	default:
		writeJSON(w, result(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": "small"}}}))
		return
	}
	io.WriteString(w, line+"\n")
}

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// serveRaw answers JSON-RPC lines from r on w according to b.
func serveRaw(r io.Reader, w io.Writer, b behaviour) error {
	if b.delay {
		d, err := time.ParseDuration(os.Getenv(DelayEnv))
		if err != nil {
			return fmt.Errorf("%s: %v", DelayEnv, err)
		}
		time.Sleep(d)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(w)
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil || b.noAnswer || req.ID == nil {
			continue
		}
		if b.garbage {
			io.WriteString(out, "Server running on stdio\n\x00\x01 junk\n")
		}
		if err := b.answer(out, req); err != nil {
			out.Flush()
			if err == errDuplicate {
				return nil
			}
			return err
		}
		if err := out.Flush(); err != nil {
			return err
		}
	}
	return sc.Err()
}

// errDuplicate ends the server, with status 0 as the server seen did.
var errDuplicate = errors.New("duplicate initialize")

func (b *behaviour) answer(w io.Writer, req request) error {
	switch req.Method {
	case "server/discover":
		switch {
		case b.exitOnProbe:
			fmt.Fprintln(os.Stderr, "fatal: unknown method server/discover")
			os.Exit(3)
		case b.ignoreProbe:
			return nil
		case b.modern:
			b.discovered = true
			writeJSON(w, result(req.ID, map[string]any{
				"resultType": "complete", "supportedVersions": []string{"2026-07-28"},
				"capabilities": map[string]any{"tools": map[string]any{}},
			}))
			return nil
		}
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
	case "initialize":
		if b.onlyModern {
			writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32602, "message": "unsupported protocol version", "data": map[string]any{"supported": []string{"2026-07-28"}}}})
			return nil
		}
		if b.discovered {
			// As a strict server of the new protocol does: the handshake is done.
			writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32600, "message": "duplicate initialize"}})
			return errDuplicate
		}
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(req.Params, &p)
		writeJSON(w, result(req.ID, map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
			"serverInfo":      map[string]any{"name": "raw", "version": "1"},
		}))
	case "tools/list":
		var p struct {
			Cursor string `json:"cursor"`
		}
		json.Unmarshal(req.Params, &p)
		tools, next := []map[string]any{tool("echo"), tool("big-first"), tool("big-last")}, ""
		if b.tools != nil {
			tools, next = b.tools(p.Cursor)
		}
		res := map[string]any{"tools": tools}
		if next != "" {
			res["nextCursor"] = next
		}
		writeJSON(w, result(req.ID, res))
	case "tools/call":
		var p struct {
			Name string `json:"name"`
		}
		json.Unmarshal(req.Params, &p)
		if b.call != nil {
			b.call(w, req.ID, p.Name)
			return nil
		}
		writeJSON(w, result(req.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "called " + p.Name}}}))
	case "ping":
		writeJSON(w, result(req.ID, map[string]any{}))
	default:
		writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
	}
	return nil
}

func result(id json.RawMessage, res any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": res}
}

func writeJSON(w io.Writer, v any) {
	b, _ := json.Marshal(v)
	w.Write(append(b, '\n'))
}
