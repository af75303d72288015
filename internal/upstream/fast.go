package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-mcp/switchboard/bound"
	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
)

// The fast path of a tool call (see Pool.CallToolRaw) sends tools/call to a
// stdio server as bytes and takes its response as bytes, beside go-sdk's
// client on the same connection: go-sdk never sees the request or its
// response. A gateway that passes results on as they came (transparent
// mode) then forwards the server's result without decoding it into go-sdk's
// types and encoding it again, which is most of what a call costs. Only what
// go-sdk would pass on unchanged takes it: anything else is decoded as
// go-sdk decodes it, and the caller goes on as with Pool.Call.

// ErrNoFastPath is returned by Pool.CallToolRaw when the call cannot take
// the fast path; nothing was sent. Call Pool.Call instead.
var ErrNoFastPath = errors.New("no fast path for this call")

// rawIDPrefix starts the ids of requests on the fast path: go-sdk's client
// numbers its own, so the two never meet.
const rawIDPrefix = "sb-fast-"

var rawIDPrefixQuoted = []byte(`"` + rawIDPrefix)

// RawResult is a tool result as the server wrote it.
type RawResult struct {
	// Result is the result object: valid JSON and UTF-8, content of text
	// blocks only (each with just its type and text), maybe isError, and
	// nothing else, so that go-sdk would have passed on the same value.
	Result json.RawMessage
	// IsError is the result's isError.
	IsError bool
	// TextBytes and TextLines are the length of its text, decoded, and
	// its lines, as bound.Limits counts them.
	TextBytes, TextLines int
}

// rawCalls is a stdioConn's calls in flight on the fast path.
type rawCalls struct {
	n       atomic.Int64 // len(pending), read without the lock
	next    atomic.Uint64
	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Response
}

// claim takes line if it is the response to a call on the fast path (see
// lineReader.claim). It runs on the reading goroutine.
func (c *stdioConn) claim(line []byte) bool {
	if c.claimTask(line) {
		return true
	}
	if c.raw.n.Load() == 0 || !bytes.Contains(line, rawIDPrefixQuoted) {
		return false
	}
	line = bytes.Clone(line) // the reader's buffer is reused
	msg, ok := scanEnvelope(line)
	if !ok {
		var err error
		if msg, err = jsonrpc.DecodeMessage(line); err != nil {
			return false
		}
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return false
	}
	key, ok := resp.ID.Raw().(string)
	if !ok || len(key) <= len(rawIDPrefix) || key[:len(rawIDPrefix)] != rawIDPrefix {
		return false
	}
	c.raw.mu.Lock()
	ch := c.raw.pending[key]
	delete(c.raw.pending, key)
	c.raw.n.Store(int64(len(c.raw.pending)))
	c.raw.mu.Unlock()
	// The notifications before the answer are in go-sdk's queue: a mark
	// follows them (see settle), counted before the caller wakes.
	if m := c.settle.answered(); m != nil {
		select {
		case c.incoming <- incoming{msgs: []jsonrpc.Message{m}}:
		case <-c.closed:
		}
	}
	if ch != nil {
		ch <- resp // buffered: never blocks
	}
	// An answer to a call given up on (cancelled) is dropped, as go-sdk
	// drops one.
	return true
}

// callRaw sends a request with params, raw JSON, and returns its response.
// When ctx ends first, the server is told with notifications/cancelled, and
// cancelled, if set, is called once that is written. If the connection
// ends first, the error wraps mcp.ErrConnectionClosed.
func (c *stdioConn) callRaw(ctx context.Context, method string, params []byte, cancelled func()) (*jsonrpc.Response, error) {
	key := rawIDPrefix + strconv.FormatUint(c.raw.next.Add(1), 10)
	ch := make(chan *jsonrpc.Response, 1)
	c.raw.mu.Lock()
	if c.raw.pending == nil {
		c.raw.pending = map[string]chan *jsonrpc.Response{}
	}
	c.raw.pending[key] = ch
	c.raw.n.Store(int64(len(c.raw.pending)))
	c.raw.mu.Unlock()
	forget := func() {
		c.raw.mu.Lock()
		delete(c.raw.pending, key)
		c.raw.n.Store(int64(len(c.raw.pending)))
		c.raw.mu.Unlock()
	}
	err := c.writeRaw(func(b []byte) []byte {
		b = append(b, `{"jsonrpc":"2.0","id":"`...)
		b = append(b, key...)
		b = append(b, `","method":`...)
		b = strconv.AppendQuote(b, method) // methods are plain ASCII
		b = append(b, `,"params":`...)
		b = append(b, params...)
		return append(b, '}')
	})
	if err != nil {
		forget()
		return nil, err
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		forget()
		// As go-sdk does: the reason is the context's error.
		reason, _ := json.Marshal(ctx.Err().Error())
		_ = c.writeRaw(func(b []byte) []byte {
			b = append(b, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"`...)
			b = append(b, key...)
			b = append(b, `","reason":`...)
			b = append(b, reason...)
			return append(b, "}}"...)
		})
		if cancelled != nil {
			cancelled()
		}
		return nil, ctx.Err()
	case <-c.ended:
		forget()
		return nil, fmt.Errorf("%w: %w", mcp.ErrConnectionClosed, c.endErr)
	case <-c.closed:
		forget()
		return nil, mcp.ErrConnectionClosed
	}
}

// writeRaw writes the message build appends, and a newline, in one write;
// writes are serialised.
func (c *stdioConn) writeRaw(build func([]byte) []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.buf = append(build(c.buf[:0]), '\n')
	_, err := c.w.Write(c.buf)
	if cap(c.buf) > 64<<10 {
		c.buf = nil // do not keep a large buffer for small messages
	}
	return err
}

// CallToolRaw calls a tool on the fast path: args, a JSON object or nil,
// go to a stdio server as they are, and a result go-sdk would pass on
// unchanged comes back as the server wrote it (raw); any other result is
// decoded as go-sdk decodes it (res). Errors are Pool.Call's.
//
// It returns ErrNoFastPath, having sent nothing, for a server that is not
// connected over stdio at a protocol before 2026-07-28 (go-sdk adds to the
// request there), or when something would change the call on its way (a
// Rewriter, trace propagation). It connects the server if needed.
func (p *Pool) CallToolRaw(ctx context.Context, name, tool string, args json.RawMessage) (raw *RawResult, res *mcp.CallToolResult, err error) {
	s, ok := p.servers[name]
	if !ok || p.opts.Rewriter != nil || p.opts.Telemetry.Middleware(name) != nil {
		return nil, nil, ErrNoFastPath
	}
	if !s.cfg.ToolAllowed(tool) {
		return nil, nil, &Error{Server: name, Op: fmt.Sprintf("calling %q", tool), Class: ClassConfig,
			Err: errors.New("the tool is excluded by the server's includeTools/excludeTools")}
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	params, err := json.Marshal(rawParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the call of %q: %w", tool, err)
	}
	type out struct {
		raw *RawResult
		res *mcp.CallToolResult
	}
	o, err := run(ctx, p, name, fmt.Sprintf("calling %q", tool), func(ctx context.Context, _ *server, sess *session) (out, error) {
		if sess.fast == nil {
			return out{}, ErrNoFastPath
		}
		if task, err := sess.fast.tasks.requiresTask(ctx, sess.fast, tool); err != nil || task {
			return out{}, ErrNoFastPath // Pool.Call runs the task
		}
		params := params
		if sess.protocol >= "2026-07-28" {
			// Every request carries the client's _meta there (see
			// stdioConn.noteMeta).
			meta := sess.fast.meta.Load()
			if meta == nil {
				return out{}, ErrNoFastPath
			}
			params = append(append(append(params[:len(params)-1:len(params)-1], `,"_meta":`...), *meta...), '}')
		}
		p.fastCalls.Add(1)
		resp, err := sess.fast.callRaw(ctx, "tools/call", params, sess.cancels.paid)
		if err != nil {
			return out{}, err
		}
		resp.Result = p.opts.Redact.Bytes(resp.Result) // as redactResults does on the usual path
		if resp.Error != nil {
			return out{}, resp.Error
		}
		if inputRequired(resp.Result) {
			// 2026-07-28: the server asks for input before it does
			// anything. go-sdk's client answers such asks; the caller
			// sends the call again on the usual path, which does.
			return out{}, ErrNoFastPath
		}
		if r, ok := plainResult(resp.Result); ok {
			return out{raw: r}, nil
		}
		res, err := DecodeResult(resp.Result)
		return out{res: res}, err
	})
	return o.raw, o.res, err
}

// Decode returns the result as go-sdk's client decodes it (DecodeResult),
// reading it without go-sdk's decoder, which leaves a 32 KiB buffer of
// garbage for every value it decodes, when that is sure to give the same:
// a result without resultType (go-sdk keeps it where no one else can set
// it). FuzzRawDecode holds the two to the same result.
func (r *RawResult) Decode() (*mcp.CallToolResult, error) {
	if bytes.Contains(r.Result, []byte(`"resultType"`)) {
		return DecodeResult(r.Result)
	}
	if res, ok := r.scan(); ok {
		return res, nil
	}
	// What plainResult let through: text blocks, isError, _meta.
	var w struct {
		Meta    map[string]any `json:"_meta"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &w); err != nil {
		return DecodeResult(r.Result)
	}
	res := &mcp.CallToolResult{Meta: w.Meta, IsError: w.IsError, Content: make([]mcp.Content, len(w.Content))}
	for i, c := range w.Content {
		res.Content[i] = &mcp.TextContent{Text: c.Text}
	}
	return res, nil
}

// scan decodes a result without _meta (the commonest: text blocks and
// maybe isError) by reading it with jsonscan, each text that has no
// escape as its bytes: Decode's answer without a decoder. It reports
// false for a result with _meta or a text with an escape.
func (r *RawResult) scan() (*mcp.CallToolResult, bool) {
	res := &mcp.CallToolResult{}
	ok := jsonscan.Members(r.Result, func(key, v []byte) bool {
		switch string(key) {
		case "content":
			res.Content = make([]mcp.Content, 0, 1)
			return jsonscan.Elements(v, func(block []byte) bool {
				text, found := "", false
				jsonscan.Members(block, func(k, tv []byte) bool {
					if string(k) == "text" {
						text, found = jsonscan.PlainString(tv)
					}
					return true
				})
				if !found {
					return false
				}
				res.Content = append(res.Content, &mcp.TextContent{Text: text})
				return true
			})
		case "isError":
			res.IsError = string(v) == "true"
			return true
		case "resultType":
			return true
		}
		return false // _meta
	})
	return res, ok && res.Content != nil
}

// FastCalls is how many tool calls the pool has sent on the fast path
// (CallToolRaw), whoever asked: a measure of how often it is taken.
func (p *Pool) FastCalls() int64 { return p.fastCalls.Load() }

type rawParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// DecodeResult decodes a result as go-sdk's client would, after the repair
// of content blocks of unknown types that every stdio message gets (see
// inspect).
func DecodeResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	if fixed, changed := sanitizeResult(raw); changed {
		raw = fixed
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("unmarshaling result: %w", err)
	}
	return &res, nil
}

// inputRequired reports a result of 2026-07-28 whose resultType is not
// "complete": one that asks for input.
func inputRequired(result []byte) bool {
	if !bytes.Contains(result, []byte(`"resultType"`)) {
		return false
	}
	asks := false
	jsonscan.Members(result, func(key, v []byte) bool {
		if string(key) == "resultType" && string(v) != `"complete"` {
			asks = true
		}
		return true
	})
	return asks
}

// noteMeta keeps the _meta go-sdk's client puts in each request at
// 2026-07-28 (the protocol version, client info and capabilities, the same
// for every request of a session), from the first request that has just
// those, for the fast path to send too.
func (c *stdioConn) noteMeta(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || len(req.Params) == 0 {
		return
	}
	jsonscan.Members(req.Params, func(key, v []byte) bool {
		if string(key) != "_meta" || v[0] != '{' {
			return true
		}
		n := 0
		if jsonscan.Members(v, func(k, _ []byte) bool {
			n++
			switch string(k) {
			case mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities:
				return true
			}
			return false
		}) && n > 0 {
			meta := bytes.Clone(v)
			c.meta.CompareAndSwap(nil, &meta)
		}
		return false
	})
}

// plainResult reports whether result is one go-sdk would pass on as the
// same JSON value: an object of content (text blocks with type and text
// only), maybe isError, resultType "complete" and a _meta of no numbers
// (go-sdk decodes numbers as float64, which may round them); valid JSON and
// UTF-8; each key once. Anything else (images, structured content,
// annotations, a key go-sdk would drop) is not.
func plainResult(result []byte) (*RawResult, bool) {
	if !utf8.Valid(result) || !json.Valid(result) {
		return nil, false
	}
	r := &RawResult{Result: result}
	var seen uint8
	once := func(bit uint8) bool {
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}
	ok := jsonscan.Members(result, func(key, v []byte) bool {
		switch string(key) {
		case "content":
			if !once(1) || v[0] != '[' {
				return false
			}
			return jsonscan.Elements(v, func(block []byte) bool {
				n, lines, ok := textBlock(block)
				r.TextBytes += n
				r.TextLines += lines
				return ok
			})
		case "isError":
			if !once(2) {
				return false
			}
			switch string(v) {
			case "true":
				r.IsError = true
			case "false":
			default:
				return false
			}
			return true
		case "resultType":
			return once(4) && string(v) == `"complete"`
		case "_meta":
			return once(8) && plainMeta(v)
		}
		return false
	})
	return r, ok && seen&1 != 0
}

// plainMeta reports whether v is an object without numbers and without a
// repeated key at its top level: one go-sdk's map[string]any decodes and
// encodes again to the same value.
func plainMeta(v []byte) bool {
	if v[0] != '{' {
		return false
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			end, ok := jsonscan.SkipValue(v, i)
			if !ok {
				return false
			}
			i = end - 1
		case c == '-' || (c >= '0' && c <= '9'):
			return false
		}
	}
	keys := map[string]bool{}
	return jsonscan.Members(v, func(key, _ []byte) bool {
		if keys[string(key)] {
			return false
		}
		keys[string(key)] = true
		return true
	})
}

// textBlock reports whether block is {"type":"text","text":"…"}, in either
// order, and the length and lines of its text decoded.
func textBlock(block []byte) (n, lines int, ok bool) {
	typ, text := false, false
	ok = jsonscan.Members(block, func(key, v []byte) bool {
		switch string(key) {
		case "type":
			if typ || string(v) != `"text"` {
				return false
			}
			typ = true
			return true
		case "text":
			if text || len(v) < 2 || v[0] != '"' {
				return false
			}
			text = true
			if bytes.IndexByte(v, '\\') < 0 {
				// No escape, so no newline: one line, if any text.
				n = len(v) - 2
				lines = min(n, 1)
				return true
			}
			var s string
			if !pairedSurrogates(v) || json.Unmarshal(v, &s) != nil {
				return false
			}
			n, lines = len(s), bound.Lines(s)
			return true
		}
		return false
	})
	return n, lines, ok && typ && text
}

// pairedSurrogates reports whether every surrogate escape in the JSON
// string v is half of a pair: Go decodes a lone one as U+FFFD, so go-sdk
// would pass on another string than the server's.
func pairedSurrogates(v []byte) bool {
	high := false // the last escape was a high surrogate
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' {
			if high {
				return false
			}
			continue
		}
		i++
		if i >= len(v) || v[i] != 'u' || i+4 >= len(v) {
			if high {
				return false
			}
			continue
		}
		r, err := strconv.ParseUint(string(v[i+1:i+5]), 16, 16)
		if err != nil {
			return false
		}
		i += 4
		switch {
		case r >= 0xd800 && r < 0xdc00:
			if high {
				return false
			}
			high = true
		case r >= 0xdc00 && r < 0xe000:
			if !high {
				return false
			}
			high = false
		default:
			if high {
				return false
			}
		}
	}
	return !high
}
