package front

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// DefaultMaxMessageBytes bounds one message from a client over stdio: go-sdk's
// own bound (mcp.DefaultMaxLineLength), which ends the session instead.
const DefaultMaxMessageBytes = mcp.DefaultMaxLineLength

// StdioTransport serves a client over newline-delimited JSON-RPC on its
// reader and writer (stdin and stdout by default), as go-sdk's
// mcp.StdioTransport does, but a message the session cannot take is
// refused alone, and the session goes on. go-sdk's transport ends the
// session at the first such message, and switchboard serve with it: one
// tool call whose arguments nest a thousand levels deep, some 2 KB of
// brackets a prompt-injected model can write, would end the gateway.
//
// A message is refused when it is larger than MaxMessageBytes, nests
// deeper than go-sdk decodes (jsonscan.MaxDepth), is not JSON, is not a
// JSON-RPC message, or is a batch go-sdk would refuse (at 2025-06-18 and
// later, empty, or repeating a request id). A refused request with an id
// is answered with a JSON-RPC error that gives the reason; a refused
// response (the client's answer to a request of the server's) fails that
// request at once; anything else is logged and dropped, since JSON-RPC
// answers no message without an id.
type StdioTransport struct {
	// Reader and Writer are the client's end; default os.Stdin and
	// os.Stdout. Reader is closed with the connection when it is an
	// io.Closer (as go-sdk closes stdin); Writer is not.
	Reader io.Reader
	Writer io.Writer
	// MaxMessageBytes bounds one message. Default DefaultMaxMessageBytes.
	MaxMessageBytes int
	// Logger receives the refusals. Default: discard.
	Logger *slog.Logger
	// Server, if set, is the server the connection is served by: the
	// connection then serves clients' tasks for it (tasks.go), which
	// go-sdk cannot.
	Server *Server
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	in, out := t.Reader, t.Writer
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	limit := t.MaxMessageBytes
	if limit <= 0 {
		limit = DefaultMaxMessageBytes
	}
	log := t.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := &stdinGuard{r: bufio.NewReaderSize(in, 64<<10), in: in, limit: limit, log: log, w: &stdoutWriter{w: out}}
	// go-sdk reads what the guard passes, one valid message a line, each
	// within the limit: its own bound is not needed.
	conn, err := (&mcp.IOTransport{Reader: g, Writer: g.w, MaxLineLength: -1}).Connect(ctx)
	if err != nil || t.Server == nil {
		return conn, err
	}
	return t.Server.taskConn(ctx, conn), nil
}

// A stdinGuard reads a client's messages, one a line, and passes go-sdk
// only those it can take, refusing the others (see StdioTransport). go-sdk
// reads it from one goroutine.
type stdinGuard struct {
	r     *bufio.Reader
	in    io.Reader
	limit int
	log   *slog.Logger
	w     *stdoutWriter

	buf     []byte // the current line
	pending []byte // what go-sdk has yet to read
	version string // the protocol version the client's initialize asked for
	asked   bool   // the client has sent initialize
}

func (g *stdinGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		line, err := g.next()
		if err != nil {
			return 0, err
		}
		g.pending = line
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

func (g *stdinGuard) Close() error {
	if c, ok := g.in.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Refusals: the JSON-RPC error codes, and the reasons given.
const (
	codeParse   = -32700
	codeInvalid = -32600
)

// next returns the next line go-sdk may read, newline-terminated,
// refusing the others on the way.
func (g *stdinGuard) next() ([]byte, error) {
	for {
		line, head, tail, err := g.readLine()
		if err != nil {
			return nil, err
		}
		if line == nil {
			id, kind := jsonscan.Envelope(head)
			if id == nil {
				id = jsonscan.TailID(tail)
			}
			if out := g.refuse(id, kind, codeInvalid, fmt.Sprintf("the message is larger than %d bytes", g.limit)); out != nil {
				return out, nil
			}
			continue
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if code, reason := g.check(line); reason != "" {
			id, kind := jsonscan.Envelope(line)
			if out := g.refuse(id, kind, code, reason); out != nil {
				return out, nil
			}
			continue
		}
		return append(line, '\n'), nil
	}
}

// check returns why go-sdk cannot take line, one whole message, or "".
func (g *stdinGuard) check(line []byte) (code int, reason string) {
	switch {
	case jsonscan.Deeper(line, jsonscan.MaxDepth):
		return codeInvalid, fmt.Sprintf("the message nests deeper than %d levels", jsonscan.MaxDepth)
	case !json.Valid(line):
		return codeParse, "the message is not valid JSON"
	case line[0] == '{':
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return codeInvalid, "the message is not a JSON-RPC 2.0 message: " + err.Error()
		}
		g.noteInitialize(msg)
		return 0, ""
	case line[0] == '[':
		return g.checkBatch(line)
	}
	return codeInvalid, "the message is not a JSON-RPC 2.0 message: not an object"
}

// noteInitialize notes the protocol version a client's initialize asks
// for: go-sdk refuses batches at 2025-06-18 and later.
func (g *stdinGuard) noteInitialize(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "initialize" || g.asked {
		return
	}
	g.asked = true
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(req.Params, &p)
	g.version = p.ProtocolVersion
}

// batchVersions are the protocol versions go-sdk takes batches at, and
// negotiates when a client asks for them.
var batchVersions = map[string]bool{"2024-11-05": true, "2025-03-26": true}

// checkBatch returns why go-sdk cannot take a batch, as its ioConn would
// refuse it (ending the session), or "".
func (g *stdinGuard) checkBatch(line []byte) (code int, reason string) {
	const why = "the batch is not one go-sdk takes: "
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return codeInvalid, why + err.Error()
	}
	if len(raws) == 0 {
		return codeInvalid, why + "it is empty"
	}
	if g.asked && !batchVersions[g.version] {
		return codeInvalid, fmt.Sprintf("JSON-RPC batches are not supported at protocol version %s: send one message a line", g.version)
	}
	ids := map[string]bool{}
	var msgs []jsonrpc.Message
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return codeInvalid, why + err.Error()
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			key := idKey(req.ID)
			if ids[key] || g.w.pendingBatch(key) {
				return codeInvalid, why + "it repeats the request id " + key
			}
			ids[key] = true
		}
		msgs = append(msgs, msg)
	}
	for _, msg := range msgs {
		g.noteInitialize(msg)
	}
	g.w.addBatch(ids)
	return 0, ""
}

func idKey(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

// refuse refuses a message whose id and kind are what could be read of it:
// a request is answered with an error, a response is passed to go-sdk as
// an error response (returned, for go-sdk to read), anything else is
// logged.
func (g *stdinGuard) refuse(id []byte, kind jsonscan.Kind, code int, reason string) []byte {
	g.log.Warn("refused a message from the client", "reason", reason, "id", string(id))
	if id == nil {
		return nil
	}
	switch kind {
	case jsonscan.Request:
		if msg := errorLine(id, code, "switchboard refused this request: "+reason+"; nothing was done for it"); msg != nil {
			if _, err := g.w.Write(msg); err != nil {
				g.log.Warn("answering a refused request", "err", err)
			}
		}
	case jsonscan.Response:
		return errorLine(id, code, "switchboard refused the client's answer: "+reason)
	}
	return nil
}

// errorLine is a JSON-RPC error response for id, newline-terminated, or
// nil when go-sdk's decoder would not take it (an id of a kind it does not
// read).
func errorLine(id []byte, code int, message string) []byte {
	text, _ := json.Marshal(message)
	line := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, text)
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return nil
	}
	return append(line, '\n')
}

// readLine reads one line. A line over the limit is not kept: line is nil
// and head and tail hold its first and last bytes, where its id may be.
func (g *stdinGuard) readLine() (line, head, tail []byte, err error) {
	const edge = 4 << 10
	if cap(g.buf) > 1<<20 {
		g.buf = nil // do not keep a large buffer for small messages
	}
	g.buf = g.buf[:0]
	over := false
	for {
		frag, err := g.r.ReadSlice('\n')
		switch {
		case over:
			tail = lastBytes(tail, frag, edge)
		case len(g.buf)+len(frag) > g.limit:
			over = true
			head = append(bytes.Clone(g.buf[:min(len(g.buf), edge)]), frag[:min(len(frag), max(edge-len(g.buf), 0))]...)
			tail = lastBytes(lastBytes(nil, g.buf, edge), frag, edge)
			g.buf = g.buf[:0]
		default:
			g.buf = append(g.buf, frag...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && (len(g.buf) > 0 || over):
			// The last line has no newline; the next read returns EOF.
		case err != nil:
			return nil, nil, nil, err
		}
		if over {
			return nil, head, tail, nil
		}
		return g.buf, nil, nil, nil
	}
}

func lastBytes(tail, frag []byte, n int) []byte {
	tail = append(tail, frag...)
	if len(tail) > n {
		tail = append(tail[:0], tail[len(tail)-n:]...)
	}
	return tail
}

// stdoutWriter serialises the writes of go-sdk and of the guard, each a
// whole line, and notes when go-sdk answers a batch.
type stdoutWriter struct {
	mu      sync.Mutex
	w       io.Writer
	batches map[string]bool // request ids of batches passed on and not yet answered
}

func (w *stdoutWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.batches) > 0 && len(p) > 0 && p[0] == '[' {
		// go-sdk answers a batch with an array, once every request in it
		// has its answer: its ids are free again.
		var resps []struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(p, &resps)
		for _, r := range resps {
			if id, err := jsonrpc.MakeID(rawID(r.ID)); err == nil {
				delete(w.batches, idKey(id))
			}
		}
	}
	return w.w.Write(p)
}

// rawID is a JSON id as go-sdk's ID holds it: a float64 or a string.
func rawID(b json.RawMessage) any {
	var v any
	_ = json.Unmarshal(b, &v)
	return v
}

// Close does nothing: stdout stays open, as go-sdk leaves it.
func (w *stdoutWriter) Close() error { return nil }

func (w *stdoutWriter) pendingBatch(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.batches[key]
}

func (w *stdoutWriter) addBatch(ids map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.batches == nil {
		w.batches = map[string]bool{}
	}
	for id := range ids {
		w.batches[id] = true
	}
}
