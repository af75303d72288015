package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/oauth"
)

// httpRaw sends a task's requests (tasks.go) beside go-sdk's on a
// Streamable HTTP session: POSTs of its own, with the session's id and
// protocol version, through the connection's transport (its headers,
// origin rules and bounds) and with its OAuth token, each answered as JSON
// or as an event stream. The server's task statuses come on the session's
// standalone stream, which go-sdk reads: httpTransport.observe takes them
// there (see sseBody).
type httpRaw struct {
	rt       *httpTransport
	endpoint string
	auth     *oauth.Handler // nil without OAuth
	sess     *session
	next     atomic.Uint64
}

// rawHTTPPrefix starts the ids of httpRaw's requests.
const rawHTTPPrefix = "sb-raw-"

// callRaw implements rawCaller. When ctx ends first, the server is told
// with notifications/cancelled (the transport counts it paid).
func (h *httpRaw) callRaw(ctx context.Context, method string, params []byte, _ func()) (*jsonrpc.Response, error) {
	key := rawHTTPPrefix + strconv.FormatUint(h.next.Add(1), 10)
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": key, "method": method, "params": json.RawMessage(params)})
	if err != nil {
		return nil, err
	}
	resp, err := h.post(ctx, body)
	if err != nil {
		if ctx.Err() != nil {
			h.cancelled(ctx, key)
			return nil, ctx.Err()
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		if err := authFailure(resp, h.rt.server, h.auth != nil); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: the server answered %s", method, resp.Status)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "application/json" {
		data, err := io.ReadAll(resp.Body) // bounded by the transport (jsonBody)
		if err != nil {
			return nil, err
		}
		return answerOf(data, key)
	}
	if mt != "text/event-stream" {
		return nil, fmt.Errorf("%s: the server answered with %q, not JSON or an event stream", method, mt)
	}
	r := bufio.NewReader(resp.Body) // lines bounded by the transport (sseBody)
	for {
		line, err := r.ReadBytes('\n')
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(data))
			switch m := msg.(type) {
			case *jsonrpc.Response:
				if err == nil && m.ID.Raw() == key {
					return m, nil
				}
			case *jsonrpc.Request:
				if err == nil && m.IsCall() {
					h.refuse(ctx, m)
				}
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				h.cancelled(ctx, key)
				return nil, ctx.Err()
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("%s: the stream ended before its answer: %w", method, err)
		}
	}
}

// cancelled tells the server that the request key, given up on with ctx,
// is (the transport counts the notification paid, see cancels).
func (h *httpRaw) cancelled(ctx context.Context, key string) {
	reason, _ := json.Marshal(ctx.Err().Error())
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskCancelWait)
	defer cancel()
	if r, err := h.post(cctx, fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%q,"reason":%s}}`, key, reason)); err == nil {
		r.Body.Close()
	}
}

// refuse answers a server's request on a stream go-sdk does not read (a
// task's question, sent with tasks/result): no one here can answer it,
// and a server left waiting would hold the task until the call's timeout.
// The server goes on as with a client that cannot be asked.
func (h *httpRaw) refuse(ctx context.Context, req *jsonrpc.Request) {
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID.Raw(), "error": map[string]any{
		"code": -32601, "message": fmt.Sprintf("switchboard cannot answer %q on a task's stream over HTTP", req.Method)}})
	if err != nil {
		return
	}
	if r, err := h.post(ctx, msg); err == nil {
		r.Body.Close()
	}
}

// answerOf returns data as the response of request key.
func answerOf(data []byte, key string) (*jsonrpc.Response, error) {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, err
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.ID.Raw() != key {
		return nil, errors.New("not the answer")
	}
	return resp, nil
}

// post sends body to the session's endpoint. Its stream gets no mark
// (see settle.go): go-sdk never reads it, so no mark on it would be
// handled, and the call would wait for one.
func (h *httpRaw) post(ctx context.Context, body []byte) (*http.Response, error) {
	ctx = context.WithValue(ctx, markSlotKey{}, (*markSlot)(nil))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", h.sess.protocol)
	if id := h.sess.cs.ID(); id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	if h.auth != nil {
		ts, err := h.auth.TokenSource(ctx)
		if err != nil {
			return nil, err
		}
		if ts != nil {
			tok, err := ts.Token()
			if err != nil {
				return nil, err
			}
			tok.SetAuthHeader(req)
		}
	}
	client := &http.Client{Transport: h.rt, CheckRedirect: h.rt.checkRedirect}
	return client.Do(req)
}

// observe passes a message the server sent on any of the session's
// streams to its tasks (tasks.observe), and a task's status, as progress,
// to the client's handler: go-sdk reads it as a notification it has no
// handler for.
func (t *httpTransport) observe(msg []byte) {
	if _, note := t.tasks.observe(msg); note != nil {
		if deliver := t.deliver.Load(); deliver != nil {
			(*deliver)(note)
		}
	}
}

// progressDeliverer returns what passes a task's progress notification to
// the pool's progress handler, as go-sdk would have passed it (redacted
// as redactReceived does), for the session cs of server.
func (p *Pool) progressDeliverer(sess *session) func(jsonrpc.Message) {
	var handler func(context.Context, *mcp.ProgressNotificationClientRequest)
	if p.opts.Client != nil {
		handler = p.opts.Client.ProgressNotificationHandler
	}
	return func(note jsonrpc.Message) {
		req, ok := note.(*jsonrpc.Request)
		if !ok || handler == nil || sess.cs == nil {
			return
		}
		var params mcp.ProgressNotificationParams
		if json.Unmarshal(p.opts.Redact.Bytes(req.Params), &params) != nil {
			return
		}
		ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
		defer cancel()
		handler(ctx, &mcp.ProgressNotificationClientRequest{Session: sess.cs, Params: &params})
	}
}

// taskSide returns what runs a server's tasks on the session (tasks.go):
// its tasks, how requests go beside go-sdk's, and how progress reaches the
// caller; nil tasks for a connection without (legacy SSE, in-process).
func (sess *session) taskSide() (*tasks, rawCaller, func(jsonrpc.Message)) {
	switch {
	case sess.fast != nil:
		return &sess.fast.tasks, sess.fast, sess.fast.pass
	case sess.raw != nil:
		deliver := sess.rt.deliver.Load()
		return &sess.rt.tasks, sess.raw, func(note jsonrpc.Message) {
			if note != nil {
				(*deliver)(note)
			}
		}
	}
	return nil, nil, nil
}
