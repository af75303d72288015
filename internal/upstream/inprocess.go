package upstream

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// In-process servers are go-sdk servers a Go host ships in its own binary
// (config.TransportInProcess, Options.InProcess). Each connection is a new
// session of the host's server over go-sdk's in-memory transport: there is
// no process to start or kill, and nothing to resolve, but the rest is a
// connection like any other: it is made lazily (or as the lifecycle says),
// closed when idle, bounded by the request timeout, replaced on the next
// use after it ends, and its lists are cached and refreshed on list_changed.

// openInProcess connects a new session of the server's in-process server.
func (s *server) openInProcess(ctx context.Context, client *mcp.Client, opts *mcp.ClientSessionOptions, c *cancels, st *settle) (*mcp.ClientSession, error) {
	srv := s.pool.opts.InProcess[s.cfg.Name]
	if srv == nil {
		return nil, withClass(ClassConfig, errors.New("no in-process server was given for it: this is a bug"))
	}
	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverEnd, nil)
	if err != nil {
		return nil, withClass(ClassStart, fmt.Errorf("starting the in-process server: %w", err))
	}
	conn, err := clientEnd.Connect(ctx)
	if err != nil {
		_ = ss.Close()
		return nil, withClass(ClassStart, err)
	}
	rc := newRootsConn(newReadCapConn(conn, s.pool.opts.MaxReadBytes), nil)
	var read mcp.Connection = rc
	if st != nil {
		read = &settleConn{Connection: rc, st: st}
	}
	cs, err := client.Connect(ctx, cancelTransport{connTransport{read}, c}, opts)
	if err != nil {
		_ = ss.Close()
		return nil, withClass(ClassStart, err)
	}
	s.settleRoots(ctx, client, cs, rc)
	return cs, nil
}

// A Rewriter changes what callers see of servers' tools: a Go host's
// facades (package switchboard) are tools no server lists, over tools a
// server does list, which they may hide. Its methods are called
// concurrently, with no lock held.
type Rewriter interface {
	// Tools returns the tools callers see of a server, given the ones it
	// listed that includeTools and excludeTools let through; it must not
	// modify listed or its tools. It is called on every listing, refreshes
	// included. The tools it adds must have names of their own, and are
	// subject to includeTools and excludeTools too.
	Tools(server string, listed []*mcp.Tool) []*mcp.Tool

	// Call carries out a call of one of a server's tools, as callers named
	// it: it may answer itself (an error result for bad arguments), refuse
	// (an error), or send the server a call, once, with c.Send.
	Call(ctx context.Context, c *ToolCall) (*mcp.CallToolResult, error)
}

// A ToolCall is a call of a server's tool, as a Rewriter gets it.
type ToolCall struct {
	Server string
	Params *mcp.CallToolParams
	// Tools returns the server's tools as callers see them (Rewriter.Tools
	// applied), listing them first if this connection has not yet.
	Tools func(context.Context) ([]*mcp.Tool, error)
	// Send sends the server a call.
	Send func(context.Context, *mcp.CallToolParams) (*mcp.CallToolResult, error)
}

// rewriteTools applies the pool's Rewriter to a server's listed tools.
func (s *server) rewriteTools(listed []*mcp.Tool) []*mcp.Tool {
	rw := s.pool.opts.Rewriter
	if rw == nil {
		return listed
	}
	tools := rw.Tools(s.cfg.Name, listed)
	out := tools[:0:0]
	for _, t := range tools {
		if t != nil && checkToolName(t.Name) == nil && s.cfg.ToolAllowed(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// rewriteCall sends a call through the pool's Rewriter, if any.
func (p *Pool) rewriteCall(ctx context.Context, name, op string, params *mcp.CallToolParams, send func(context.Context, *mcp.CallToolParams) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	rw := p.opts.Rewriter
	if rw == nil {
		return send(ctx, params)
	}
	res, err := rw.Call(ctx, &ToolCall{Server: name, Params: params, Send: send,
		Tools: func(ctx context.Context) ([]*mcp.Tool, error) { return p.Tools(ctx, name) }})
	var e *Error
	if err != nil && !errors.As(err, &e) {
		err = &Error{Server: name, Op: op, Class: ClassConfig, Err: err}
	}
	return res, err
}
