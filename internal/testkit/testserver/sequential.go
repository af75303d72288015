package testserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Sequential is a raw stdio server that handles one message at a time, as
// many simple servers do. Its tool "ask-roots" writes "ask-roots: called"
// to stderr, then waits for the next message
// from the client (so that the client has a request of its own
// outstanding), keeps it, asks the client for its roots (roots/list) and
// reads until the answer comes, answers the call with the roots' URIs, and
// only then answers the request it kept. Its tool "echo" answers "echo".
const Sequential = "sequential"

func init() { extraModes[Sequential] = serveSequential }

// extraModes are modes served by functions of their own.
var extraModes = map[string]func() error{}

type seqMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

func serveSequential() error {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	read := func() (seqMessage, bool) {
		for sc.Scan() {
			var m seqMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				return m, true
			}
		}
		return seqMessage{}, false
	}
	var answer func(m seqMessage) error
	answer = func(m seqMessage) error {
		switch m.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			json.Unmarshal(m.Params, &p)
			writeJSON(out, result(m.ID, map[string]any{"protocolVersion": p.ProtocolVersion,
				"capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "sequential", "version": "1"}}))
		case "tools/list":
			writeJSON(out, result(m.ID, map[string]any{"tools": []any{tool("ask-roots"), tool("echo")}}))
		case "ping":
			writeJSON(out, result(m.ID, map[string]any{}))
		case "tools/call":
			var p struct {
				Name string `json:"name"`
			}
			json.Unmarshal(m.Params, &p)
			if p.Name != "ask-roots" {
				writeJSON(out, result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "echo"}}}))
				break
			}
			fmt.Fprintln(os.Stderr, "ask-roots: called")
			var kept []seqMessage
			for len(kept) == 0 { // the client's next request, outstanding from now on
				next, ok := read()
				if !ok {
					return io.ErrUnexpectedEOF
				}
				if next.ID != nil && next.Method != "" {
					kept = append(kept, next)
				}
			}
			writeJSON(out, map[string]any{"jsonrpc": "2.0", "id": "seq-roots", "method": "roots/list"})
			if err := out.Flush(); err != nil {
				return err
			}
			var uris []string
			for {
				next, ok := read()
				if !ok {
					return io.ErrUnexpectedEOF
				}
				if string(next.ID) == `"seq-roots"` && next.Method == "" {
					var r struct {
						Roots []struct {
							URI string `json:"uri"`
						} `json:"roots"`
					}
					json.Unmarshal(next.Result, &r)
					for _, root := range r.Roots {
						uris = append(uris, root.URI)
					}
					break
				}
				if next.ID != nil && next.Method != "" {
					kept = append(kept, next)
				}
			}
			writeJSON(out, result(m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Join(uris, ",")}}}))
			for _, k := range kept {
				if err := answer(k); err != nil {
					return err
				}
			}
		default:
			if m.ID != nil && m.Method != "" {
				writeJSON(out, map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": fmt.Sprintf("method %q not found", m.Method)}})
			}
		}
		return out.Flush()
	}
	for {
		m, ok := read()
		if !ok {
			return sc.Err()
		}
		if m.ID == nil || m.Method == "" {
			continue // notifications, and answers nobody waits for
		}
		if err := answer(m); err != nil {
			return err
		}
	}
}
