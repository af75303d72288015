package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A stdioConn is the client side of a stdio server's connection: newline-
// delimited JSON-RPC over the child's stdout (through a lineReader) and
// stdin. It stands in for go-sdk's IOTransport, whose connection decodes
// each message three times (see scanEnvelope): here the envelope is scanned
// once, on the reading goroutine. go-sdk's IOTransport has no client-side
// methods beyond mcp.Connection that a wrapper would hide (its
// sessionUpdated takes a server's state), so replacing it loses nothing.
//
// As in go-sdk's, a goroutine reads the lines, so that Read can end with its
// context (the protocol probe relies on it, see probeConn); it ends when the
// server's output does, which closing the connection brings about (see
// process.close); Close waits for it.
//
// A line go-sdk's decoder must judge (see scanEnvelope) goes to
// jsonrpc.DecodeMessage; a batch (a JSON array, which only servers of
// protocols before 2025-06-18 may send) is decoded element by element and
// its messages are returned in turn; the responses to a batch's requests go
// back one by one, as JSON-RPC allows a peer that does not batch.
type stdioConn struct {
	w        io.WriteCloser
	incoming chan incoming

	queue []jsonrpc.Message // the rest of a batch; only Read touches it

	// scanned and decoded count the messages read by scanEnvelope and by
	// go-sdk's decoder.
	scanned, decoded atomic.Int64

	wmu sync.Mutex
	buf []byte // the message being written, reused

	raw    rawCalls               // calls on the fast path (see callRaw)
	settle *settle                // marks what is read (see settle); may be nil
	meta   atomic.Pointer[[]byte] // the _meta of go-sdk's requests at 2026-07-28 (see noteMeta)
	tasks  tasks                  // what the server's tasks need (see tasks.go)

	ended  chan struct{} // closed when reading has ended, endErr saying why
	endErr error

	closeOnce sync.Once
	closeErr  error
	closed    chan struct{}
	readDone  chan struct{} // closed when the reading goroutine has returned
}

// incoming is one line read: its messages, or the error that ended reading.
type incoming struct {
	msgs []jsonrpc.Message
	err  error
}

func newStdioConn(r *lineReader, w io.WriteCloser, st *settle) *stdioConn {
	c := &stdioConn{w: w, incoming: make(chan incoming), closed: make(chan struct{}), readDone: make(chan struct{}), ended: make(chan struct{}), settle: st}
	r.claim = c.claim
	go c.read(r)
	return c
}

func (c *stdioConn) SessionID() string { return "" }

// read reads lines until the server's output ends or the connection is
// closed.
func (c *stdioConn) read(r *lineReader) {
	defer close(c.readDone)
	for {
		var in incoming
		line, err := r.next()
		if err != nil {
			in.err = err
			c.endErr = err
			close(c.ended)
		} else {
			in.msgs, in.err = c.decode(line)
			if in.err != nil {
				if in.msgs = c.refuse(r, line, in.err); in.msgs == nil {
					continue
				}
				in.err = nil
			}
			in.msgs = c.mark(in.msgs)
		}
		select {
		case c.incoming <- in:
			if err != nil {
				return
			}
		case <-c.closed:
			return
		}
	}
}

// mark puts a mark after each answer among msgs that a notification came
// before (see settle).
func (c *stdioConn) mark(msgs []jsonrpc.Message) []jsonrpc.Message {
	if c.settle == nil {
		return msgs
	}
	for i := 0; i < len(msgs); i++ {
		if c.settle.read(msgs[i]) {
			msgs = slices.Insert(msgs, i+1, c.settle.mark())
			i++
		}
	}
	return msgs
}

// decode reads one line's messages.
func (c *stdioConn) decode(line []byte) ([]jsonrpc.Message, error) {
	// The line's buffer is the reader's, reused for the next line: the
	// message keeps a copy, which its params or result alias.
	line = append([]byte(nil), line[:len(line)-1]...)
	if msg, ok := scanEnvelope(line); ok {
		c.scanned.Add(1)
		return []jsonrpc.Message{msg}, nil
	}
	c.decoded.Add(1)
	if line[0] != '[' {
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return nil, fmt.Errorf("reading from the server: %w", err)
		}
		return []jsonrpc.Message{msg}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, fmt.Errorf("reading a batch from the server: %w", err)
	}
	if len(raws) == 0 {
		return nil, errors.New("reading a batch from the server: empty batch")
	}
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, raw := range raws {
		msg, ok := scanEnvelope(raw)
		if !ok {
			var err error
			if msg, err = jsonrpc.DecodeMessage(raw); err != nil {
				return nil, fmt.Errorf("reading a batch from the server: %w", err)
			}
		}
		msgs = append(msgs, msg)
	}
	return msgs, nil
}

// refuse stands in for a line go-sdk's decoder refuses (too deep, not a
// JSON-RPC message): a response with a readable id becomes an error
// response that fails its call at once, saying why (delivered here if the
// call is on the fast path: nil then); anything else is dropped, with a
// warning. Either way the connection goes on.
func (c *stdioConn) refuse(r *lineReader, line []byte, err error) []jsonrpc.Message {
	why := unreadable(line, err)
	resp := refusedResponse(line, why)
	if resp == nil {
		r.warn("ignored a message from the server that cannot be read", "reason", why, "line", preview(line))
		return nil
	}
	r.warn("refused a response that cannot be read", "reason", why)
	if c.claim(resp[:len(resp)-1]) {
		return nil
	}
	msg, derr := jsonrpc.DecodeMessage(resp[:len(resp)-1])
	if derr != nil {
		return nil // refusedResponse decoded it already
	}
	return []jsonrpc.Message{msg}
}

// Read returns the next message. go-sdk calls it from one goroutine.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		msg := c.queue[0]
		c.queue = c.queue[1:]
		return msg, nil
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case in := <-c.incoming:
		if in.err != nil {
			return nil, in.err
		}
		c.queue = in.msgs[1:]
		return in.msgs[0], nil
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write writes msg and a newline in one write; writes are serialised.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %v", err)
	}
	if c.meta.Load() == nil {
		c.noteMeta(msg)
	}
	return c.writeRaw(func(b []byte) []byte { return append(b, data...) })
}

// Close closes the server's input, which ends the process (see
// process.close) and so the reader, and waits for the reader. It is
// idempotent.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.closeErr = c.w.Close()
		<-c.readDone
	})
	return c.closeErr
}
