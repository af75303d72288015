package upstream

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"strconv"
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
// So a mark goes into that queue between the notifications and the answer,
// and an operation made with OnReach returns only once its marks have been
// handled, and so the notifications before them. Marks go to the receiving
// middleware (settle.middleware), which takes them; no handler sees one.
// Where they are put in depends on the stream:
//
//   - A stream that carries everything in order (stdio and in-process,
//     which Switchboard reads itself, and a legacy SSE event stream) gets a
//     mark after each answer that follows a notification; the operation
//     waits for the last mark put in before its answer was read.
//   - Over Streamable HTTP, each call's answer comes on a stream of its own
//     (the POST's response), which Switchboard reads as it passes (sseBody):
//     a mark goes before the answer when anything came before it on that
//     stream, and the call, which finds its stream by its context
//     (markSlot), waits for that mark alone. A stream go-sdk abandons (a
//     cancelled call) may lose a mark: only its own call waited for it.

// settle is a connection's marks.
type settle struct {
	logger string // the marks' logger: random, so that no server can forge one

	dirty atomic.Bool   // a notification was read since the last mark (ordered streams)
	seq   atomic.Uint64 // the last mark's number
	last  atomic.Uint64 // the last mark put in an ordered stream

	mu          sync.Mutex
	outstanding map[uint64]struct{} // marks put in and not yet handled
	wake        chan struct{}       // closed and replaced when a mark is handled
}

func newSettle() *settle {
	return &settle{logger: "switchboard-mark-" + rand.Text(), outstanding: map[uint64]struct{}{}, wake: make(chan struct{})}
}

// read notes a message of an ordered stream as it is read, in order, and
// reports whether a mark must follow it: it is an answer, and a
// notification came before it since the last mark. A nil settle marks
// nothing.
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

// mark returns a new mark for an ordered stream: call it before the
// answer it follows reaches its caller.
func (st *settle) mark() jsonrpc.Message {
	m, n := st.newMark()
	for {
		old := st.last.Load()
		if old >= n || st.last.CompareAndSwap(old, n) {
			return m
		}
	}
}

// newMark returns a new mark, outstanding until handled, and its number.
func (st *settle) newMark() (*jsonrpc.Request, uint64) {
	n := st.seq.Add(1)
	st.mu.Lock()
	st.outstanding[n] = struct{}{}
	st.mu.Unlock()
	params, _ := json.Marshal(&mcp.LoggingMessageParams{Level: "debug", Logger: st.logger, Data: strconv.FormatUint(n, 10)})
	return &jsonrpc.Request{Method: "notifications/message", Params: params}, n
}

// middleware is receiving middleware that takes the marks.
func (st *settle) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.LoggingMessageRequest); ok && r.Params != nil && r.Params.Logger == st.logger {
			data, _ := r.Params.Data.(string)
			if n, err := strconv.ParseUint(data, 10, 64); err == nil {
				st.forget(n)
			}
			return nil, nil
		}
		return next(ctx, method, req)
	}
}

// forget takes mark n off the outstanding ones: handled, or no longer
// waited for.
func (st *settle) forget(n uint64) {
	if st == nil || n == 0 {
		return
	}
	st.mu.Lock()
	if _, ok := st.outstanding[n]; ok {
		delete(st.outstanding, n)
		close(st.wake)
		st.wake = make(chan struct{})
	}
	st.mu.Unlock()
}

// wait returns once the last mark put in an ordered stream so far, and
// the mark of slot's stream if any, have been handled; or ctx is done, or
// the connection has ended (done closed).
func (st *settle) wait(ctx context.Context, done <-chan struct{}, slot *markSlot) {
	if st == nil {
		return
	}
	last, own := st.last.Load(), slot.load()
	for {
		st.mu.Lock()
		_, a := st.outstanding[last]
		_, b := st.outstanding[own]
		wake := st.wake
		st.mu.Unlock()
		if !a && !b {
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

// A markSlot is where the stream of one call over Streamable HTTP notes
// the mark it put before the call's answer (see sseBody); the call finds
// it in its context (withMarkSlot).
type markSlot struct{ n atomic.Uint64 }

func (s *markSlot) load() uint64 {
	if s == nil {
		return 0
	}
	return s.n.Load()
}

type markSlotKey struct{}

// withMarkSlot returns ctx with a new slot for the marks of the call made
// with it.
func withMarkSlot(ctx context.Context) (context.Context, *markSlot) {
	s := new(markSlot)
	return context.WithValue(ctx, markSlotKey{}, s), s
}

func markSlotOf(ctx context.Context) *markSlot {
	s, _ := ctx.Value(markSlotKey{}).(*markSlot)
	return s
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
