package upstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// openSocket connects a "socket" server: a program that another process
// runs (a multiplexer such as rmcp-mux shares one server among its
// clients) and that speaks MCP over a Unix socket in stdio's framing. The
// connection is a stdio one in all but its ends: the same line reader,
// bounds and fast lane; closing it closes only Switchboard's end of the
// socket, never the program behind it.
func (s *server) openSocket(ctx context.Context, client *mcp.Client, opts *mcp.ClientSessionOptions, sess *session) (*mcp.ClientSession, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", s.cfg.Socket)
	if err != nil {
		return nil, withClass(ClassStart, fmt.Errorf("connecting to the socket %s: %w (hint: is the program that serves it running?)", s.cfg.Socket, unwrapDial(err)))
	}
	sess.fast = newStdioConn(newLineReader(c, s.pool.opts.MaxMessageBytes, s.log), socketWriter{c, s.timeout}, sess.settle)
	var conn mcp.Connection = sess.fast
	rc := newRootsConn(newReadCapConn(conn, s.pool.opts.MaxReadBytes), nil)
	cs, err := client.Connect(ctx, cancelTransport{connTransport{rc}, sess.cancels}, opts)
	if err != nil {
		_ = rc.Close()
		return nil, withClass(ClassStart, fmt.Errorf("connecting to the socket %s: %w", s.cfg.Socket, err))
	}
	s.settleRoots(ctx, client, cs, rc)
	return cs, nil
}

// unwrapDial drops net's "dial unix PATH:" prefix, which repeats the path.
func unwrapDial(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		var sys *os.SyscallError
		if errors.As(op.Err, &sys) {
			return sys.Err
		}
		return op.Err
	}
	return err
}

// socketWriter writes to a socket server, each write bounded by the
// server's request timeout as a write to a stdio server's input is: a
// program that stops reading cannot hold a call forever.
type socketWriter struct {
	c        net.Conn
	writeMax time.Duration
}

func (w socketWriter) Write(b []byte) (int, error) {
	if w.writeMax > 0 {
		_ = w.c.SetWriteDeadline(time.Now().Add(w.writeMax))
	}
	n, err := w.c.Write(b)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = fmt.Errorf("the program behind the socket stopped reading for %v", w.writeMax)
	}
	return n, err
}

func (w socketWriter) Close() error { return w.c.Close() }
