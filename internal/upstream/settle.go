package upstream

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk hands a call its answer as soon as the answer is read, while the
// notifications the server sent before it (log messages, progress) wait in
// a queue for their handler: a caller may go on, and end, before it has
// heard of them. A gateway that passes them to the client whose call is in
// flight would then give them to whoever calls the server next.
//
// A connection Switchboard reads itself (stdio, in-process) puts a mark in
// that queue after each answer that follows a notification; an operation
// made with OnReach returns only once the marks put in before its answer
// was read have been handled, and so the notifications before them. Marks
// go to the receiving middleware (settle.middleware), which takes them; no
// handler sees one. An HTTP connection is go-sdk's own, which Switchboard
// cannot mark: there, a notification may still be handled after its call.

// settle is a connection's marks.
type settle struct {
	logger string // the marks' logger: random, so that no server can forge one

	dirty atomic.Bool   // a notification was read since the last mark
	sent  atomic.Uint64 // marks put in the queue

	mu      sync.Mutex
	handled uint64        // marks handled, in order
	wake    chan struct{} // closed and replaced when handled grows
}

func newSettle() *settle {
	return &settle{logger: "switchboard-mark-" + rand.Text(), wake: make(chan struct{})}
}

// read notes a message as it is read, in order, and reports whether a mark
// must follow it: it is an answer, and a notification came before it since
// the last mark. A nil settle marks nothing.
func (st *settle) read(msg jsonrpc.Message) bool {
	if st == nil {
		return false
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if !m.IsCall() {
			st.dirty.Store(true)
		}
	case *jsonrpc.Response:
		return st.dirty.Swap(false)
	}
	return false
}

// answered is read for an answer that does not go to go-sdk (a call on
// the fast path): it returns the mark to put in go-sdk's queue, or nil.
func (st *settle) answered() jsonrpc.Message {
	if st == nil || !st.dirty.Swap(false) {
		return nil
	}
	return st.mark()
}

// mark returns a new mark, counted as sent: call it before the answer it
// follows reaches its caller.
func (st *settle) mark() jsonrpc.Message {
	st.sent.Add(1)
	params, _ := json.Marshal(&mcp.LoggingMessageParams{Level: "debug", Logger: st.logger, Data: ""})
	return &jsonrpc.Request{Method: "notifications/message", Params: params}
}

// middleware is receiving middleware that takes the marks.
func (st *settle) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.LoggingMessageRequest); ok && r.Params != nil && r.Params.Logger == st.logger {
			st.mu.Lock()
			st.handled++
			close(st.wake)
			st.wake = make(chan struct{})
			st.mu.Unlock()
			return nil, nil
		}
		return next(ctx, method, req)
	}
}

// wait returns once the marks sent so far have been handled, or ctx is
// done, or the connection has ended (done closed).
func (st *settle) wait(ctx context.Context, done <-chan struct{}) {
	if st == nil {
		return
	}
	target := st.sent.Load()
	for {
		st.mu.Lock()
		handled, wake := st.handled, st.wake
		st.mu.Unlock()
		if handled >= target {
			return
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return
		case <-done:
			return
		}
	}
}

// settleConn marks the messages go-sdk reads from a connection of its own
// making (in-process).
type settleConn struct {
	mcp.Connection
	st      *settle
	pending jsonrpc.Message // a mark to return next; only Read touches it
}

func (c *settleConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if m := c.pending; m != nil {
		c.pending = nil
		return m, nil
	}
	msg, err := c.Connection.Read(ctx)
	if err == nil && c.st.read(msg) {
		c.pending = c.st.mark()
	}
	return msg, err
}
