package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The read cap (DESIGN.md, Bounds): the result of one resources/read or
// prompts/get is at most DefaultMaxReadBytes of JSON. A larger one is
// refused before the SDK decodes it: the response is replaced by an error
// response that names the cap, so the one request fails, nothing of the
// result reaches the caller (nothing is spilled or shown), and the
// connection stays usable.
//
// Over stdio and legacy SSE, readCapConn does it on the connection, where
// the result is still raw JSON. Streamable HTTP cannot be wrapped there
// (go-sdk's client tells its connection the negotiated version through an
// unexported method that a wrapper would hide), so httpTransport does it on
// the response body of the POST that carried the request: a JSON body is
// read no further than the cap, and an event stream's oversized data line is
// discarded as it streams.

// DefaultMaxReadBytes caps the result of one resources/read or prompts/get.
const DefaultMaxReadBytes = 8 << 20

// codeReadCap is the JSON-RPC error code of a response refused for the read
// cap (in the range JSON-RPC leaves to implementations).
const codeReadCap = -32099

// capped reports whether the results of method are subject to the read cap.
func capped(method string) bool {
	return method == "resources/read" || method == "prompts/get"
}

// readCapError is the message of a refused response; size < 0 means more
// than the cap, when the rest was not read.
func readCapError(method string, size, limit int) string {
	what := "a resource"
	if method == "prompts/get" {
		what = "a prompt"
	}
	over := fmt.Sprintf("%d bytes", size)
	if size < 0 {
		over = "more than " + fmtBytes(limit)
	}
	return fmt.Sprintf("result of %s refused: it is over switchboard's cap of %s on %s, and nothing of it is passed on", over, fmtBytes(limit), what)
}

// fmtBytes prints a limit in MiB when it is a whole number of them.
func fmtBytes(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// readCapResponse is the error response that replaces a refused one.
func readCapResponse(id jsonrpc.ID, method string, size, limit int) *jsonrpc.Response {
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: codeReadCap, Message: readCapError(method, size, limit)}}
}

// isReadCap reports whether wire is the error of a refused response.
func isReadCap(wire *jsonrpc.Error) bool { return wire.Code == codeReadCap }

// A readCapConn applies the read cap to a connection. It notes the ids of
// capped requests as they are written and forgets them when their response
// arrives or the request is cancelled.
type readCapConn struct {
	mcp.Connection
	limit int

	mu      sync.Mutex
	pending map[jsonrpc.ID]string // request id → method
}

func newReadCapConn(c mcp.Connection, limit int) *readCapConn {
	return &readCapConn{Connection: c, limit: limit, pending: map[jsonrpc.ID]string{}}
}

func (c *readCapConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return c.Connection.Write(ctx, msg)
	}
	switch {
	case req.IsCall() && capped(req.Method):
		c.mu.Lock()
		c.pending[req.ID] = req.Method
		c.mu.Unlock()
		err := c.Connection.Write(ctx, msg)
		if err != nil {
			c.forget(req.ID)
		}
		return err
	case req.Method == "notifications/cancelled":
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
				c.forget(id)
			}
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *readCapConn) forget(id jsonrpc.ID) (method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	method = c.pending[id]
	delete(c.pending, id)
	return method
}

func (c *readCapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	resp, ok := msg.(*jsonrpc.Response)
	if err != nil || !ok || !resp.ID.IsValid() {
		return msg, err
	}
	if method := c.forget(resp.ID); method != "" && len(resp.Result) > c.limit {
		return readCapResponse(resp.ID, method, len(resp.Result), c.limit), nil
	}
	return msg, nil
}

// readCapTransport connects through a readCapConn.
type readCapTransport struct {
	mcp.Transport
	limit int
}

func (t readCapTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newReadCapConn(c, t.limit), nil
}

// A cappedPost is a POST that carries a capped request: its response is
// read no further than the cap.
type cappedPost struct {
	id     json.RawMessage // the request's id, as JSON
	method string
	limit  int
}

// go-sdk writes a request's id and method first ({"jsonrpc":"2.0","id":3,
// "method":"resources/read",...}); a client of another order is simply not
// capped here, and the message bound still applies.
var cappedHead = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*` + idPattern + `\s*,\s*"method"\s*:\s*"(resources/read|prompts/get)"`)
})

// cappedRequest returns the capped request a POST body starts with, if any.
func cappedRequest(head []byte, limit int) *cappedPost {
	m := cappedHead().FindSubmatch(head)
	if m == nil {
		return nil
	}
	return &cappedPost{id: json.RawMessage(m[1]), method: string(m[2]), limit: limit}
}

// refusal returns the error response standing in for the POST's response;
// size < 0 means "more than the cap".
func (p *cappedPost) refusal(size int) []byte {
	msg, _ := json.Marshal(readCapError(p.method, size, p.limit))
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, p.id, codeReadCap, msg)
}

// capSlack is room for a response's envelope (jsonrpc, id) around its
// result: a message of at most limit+capSlack bytes is kept to measure its
// result exactly; a longer one is refused unread.
const capSlack = 4 << 10

// refuse returns the error response that replaces msg, a response to the
// capped request read in full (whole) or cut at its limit, or nil when its
// result is within the cap.
func (p *cappedPost) refuse(msg []byte, whole bool) []byte {
	if len(msg) <= p.limit {
		return nil
	}
	if !whole {
		return p.refusal(-1)
	}
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(msg, &r) != nil || len(r.Result) <= p.limit {
		return nil
	}
	return p.refusal(len(r.Result))
}
