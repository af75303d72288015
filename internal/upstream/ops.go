package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/telemetry"
)

// Operations. Each connects the server if needed (lazily: this is the first
// use), is bounded by the server's request timeout, and fails with an *Error
// naming the server, the operation and, for a timeout, the limit:
//
//	calling "echo" on "everything": timed out after 60s
//
// Cancelling ctx returns at once; the SDK tells the server with
// notifications/cancelled and the connection stays usable. Nothing is ever
// retried or replayed: a call that failed returns its error, and only the
// next operation connects again.
//
// Returned lists are shared: callers must not modify them.

// Tools returns the server's tools that includeTools/excludeTools let
// through, without those whose names are unsafe.
func (p *Pool) Tools(ctx context.Context, name string) ([]*mcp.Tool, error) {
	return run(ctx, p, name, "listing tools", func(ctx context.Context, s *server, sess *session) ([]*mcp.Tool, error) {
		return list[*mcp.Tool](ctx, s, sess, kindTools)
	})
}

// ListedTools returns the tools the server's current connection listed,
// as Tools does, without connecting or listing: ok is false when the
// server is not connected or has not listed its tools on this
// connection. After tools/list_changed it returns the previous list until
// the new one is fetched.
func (p *Pool) ListedTools(name string) (tools []*mcp.Tool, ok bool) {
	s, ok := p.servers[name]
	if !ok {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.lists[kindTools]
	if !c.ok || s.sess == nil || c.gen != s.sess.gen {
		return nil, false
	}
	tools, ok = c.items.([]*mcp.Tool)
	return tools, ok
}

// Resources returns the server's resources.
func (p *Pool) Resources(ctx context.Context, name string) ([]*mcp.Resource, error) {
	return run(ctx, p, name, "listing resources", func(ctx context.Context, s *server, sess *session) ([]*mcp.Resource, error) {
		if !sess.has(func(c *mcp.ServerCapabilities) bool { return c.Resources != nil }) {
			return nil, nil
		}
		return list[*mcp.Resource](ctx, s, sess, kindResources)
	})
}

// ResourceTemplates returns the server's resource templates.
func (p *Pool) ResourceTemplates(ctx context.Context, name string) ([]*mcp.ResourceTemplate, error) {
	return run(ctx, p, name, "listing resource templates", func(ctx context.Context, s *server, sess *session) ([]*mcp.ResourceTemplate, error) {
		if !sess.has(func(c *mcp.ServerCapabilities) bool { return c.Resources != nil }) {
			return nil, nil
		}
		return list[*mcp.ResourceTemplate](ctx, s, sess, kindTemplates)
	})
}

// Prompts returns the server's prompts.
func (p *Pool) Prompts(ctx context.Context, name string) ([]*mcp.Prompt, error) {
	return run(ctx, p, name, "listing prompts", func(ctx context.Context, s *server, sess *session) ([]*mcp.Prompt, error) {
		if !sess.has(func(c *mcp.ServerCapabilities) bool { return c.Prompts != nil }) {
			return nil, nil
		}
		return list[*mcp.Prompt](ctx, s, sess, kindPrompts)
	})
}

// Instructions returns the instructions the server gave when it connected.
func (p *Pool) Instructions(ctx context.Context, name string) (string, error) {
	return run(ctx, p, name, "getting instructions", func(_ context.Context, _ *server, sess *session) (string, error) {
		return sess.instructions, nil
	})
}

// CallTool calls a tool once with args (nil is sent as {}). A tool that
// includeTools/excludeTools exclude is not called. A result with isError set
// is returned as a result, not an error: it is the tool's answer.
func (p *Pool) CallTool(ctx context.Context, name, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	if args == nil {
		args = map[string]any{}
	}
	return p.Call(ctx, name, &mcp.CallToolParams{Name: tool, Arguments: args})
}

// Call is CallTool with the whole request: a gateway uses it to pass on
// _meta such as a progress token. Arguments that are nil are sent as {}.
func (p *Pool) Call(ctx context.Context, name string, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	op := fmt.Sprintf("calling %q", params.Name)
	if s, ok := p.servers[name]; ok && !s.cfg.ToolAllowed(params.Name) {
		return nil, &Error{Server: name, Op: op, Class: ClassConfig,
			Err: errors.New("the tool is excluded by the server's includeTools/excludeTools")}
	}
	if params.Arguments == nil {
		cp := *params
		cp.Arguments = map[string]any{}
		params = &cp
	}
	return p.rewriteCall(ctx, name, op, params, func(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
		return run(ctx, p, name, fmt.Sprintf("calling %q", params.Name), func(ctx context.Context, _ *server, sess *session) (*mcp.CallToolResult, error) {
			if t, rc, pass := sess.taskSide(); t != nil {
				task, err := t.requiresTask(ctx, rc, params.Name)
				if err != nil {
					return nil, err
				}
				if task {
					raw, err := t.callTask(ctx, rc, params, sess.cancels.paid, pass)
					if err != nil {
						return nil, err
					}
					// go-sdk's middleware never saw it: redacted as
					// redactResults does on the usual path.
					return DecodeResult(p.opts.Redact.Bytes(raw))
				}
			}
			return sess.cs.CallTool(ctx, params)
		})
	})
}

// Complete asks the server to complete a prompt or resource template
// argument.
func (p *Pool) Complete(ctx context.Context, name string, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return run(ctx, p, name, "completing an argument", func(ctx context.Context, _ *server, sess *session) (*mcp.CompleteResult, error) {
		return sess.cs.Complete(ctx, params)
	})
}

// ReadResource reads the resource at uri. The uri is not repeated in errors:
// it may hold credentials.
func (p *Pool) ReadResource(ctx context.Context, name, uri string) (*mcp.ReadResourceResult, error) {
	return run(ctx, p, name, "reading a resource", func(ctx context.Context, _ *server, sess *session) (*mcp.ReadResourceResult, error) {
		return sess.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	})
}

// GetPrompt gets a prompt with its arguments.
func (p *Pool) GetPrompt(ctx context.Context, name, prompt string, args map[string]string) (*mcp.GetPromptResult, error) {
	return run(ctx, p, name, fmt.Sprintf("getting prompt %q", prompt), func(ctx context.Context, _ *server, sess *session) (*mcp.GetPromptResult, error) {
		return sess.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt, Arguments: args})
	})
}

// Reconnect closes the server's connection, if any, and connects again.
// Concurrent reconnects, and a connection attempt already under way, share
// one attempt. It cancels automatic reconnection in progress.
func (p *Pool) Reconnect(ctx context.Context, name string) error {
	s, err := p.serverFor(ctx, name, opReconnect)
	if err != nil {
		return err
	}
	reached(ctx, name)
	s.mu.Lock()
	if err := s.usable(opReconnect); err != nil {
		s.mu.Unlock()
		return err
	}
	s.stopReconnectLocked()
	old := s.sess
	s.sess = nil
	d, _ := s.dialLocked(old, telemetry.From(ctx))
	s.mu.Unlock()
	s.pool.notify(name)
	select {
	case <-d.done:
	case <-ctx.Done():
		return opError(ctx, name, opReconnect, 0, ctx.Err(), ClassCanceled)
	}
	if d.err != nil {
		var e *Error
		if errors.As(d.err, &e) {
			return &Error{Server: name, Op: opReconnect, Class: e.Class, Limit: e.Limit, Err: e.Err}
		}
		return &Error{Server: name, Op: opReconnect, Class: classOf(d.err, ClassTransport), Err: d.err}
	}
	return nil
}

// run runs one operation on a server: it acquires a session (connecting if
// needed), bounds f by the request timeout and turns its error into an *Error.
func run[T any](ctx context.Context, p *Pool, name, op string, f func(context.Context, *server, *session) (T, error)) (T, error) {
	var zero T
	s, err := p.serverFor(ctx, name, op)
	if err != nil {
		return zero, err
	}
	ctx = reached(ctx, name)
	sess, err := s.acquire(ctx, op)
	if err != nil {
		return zero, opError(ctx, name, op, s.timeout, err, ClassStart)
	}
	defer s.release(sess)
	octx, cancel := withTimeout(ctx, s.timeout)
	defer cancel()
	var slot *markSlot
	if onReach(ctx) && sess.rt != nil {
		octx, slot = withMarkSlot(octx)
		defer func() { sess.settle.forget(slot.load()) }()
	}
	v, err := f(octx, s, sess)
	if err == ErrNoFastPath {
		return zero, err
	}
	if onReach(ctx) && octx.Err() == nil {
		sess.settle.wait(octx, sess.done, slot)
	}
	if err != nil && octx.Err() != nil {
		sess.cancels.owe() // go-sdk tells the server, asynchronously
	}
	if err != nil {
		return zero, s.opFailed(octx, sess, op, err)
	}
	return v, nil
}

// opFailed classifies the error of an operation on sess. If it shows the
// connection is gone (the child exited, the HTTP server went away, the
// session expired), the session is dropped, so that the next operation
// connects again, and the error says why the connection ended.
func (s *server) opFailed(ctx context.Context, sess *session, op string, err error) error {
	class := ClassServer
	var wire *jsonrpc.Error
	auth := authCause(err, sess.takeAuth())
	switch {
	case ctx.Err() != nil:
		// A timeout or a cancellation: the connection stays.
	case auth != nil:
		// 401 or 403 insufficient_scope: the answer is the credentials'
		// fault, whatever the SDK made of it; with OAuth, the handler's
		// error says more.
		err, class = auth, ClassAuth
	case sess.rt != nil && sess.rt.takeErr() != nil, sess.ended(),
		errors.Is(err, mcp.ErrConnectionClosed), errors.Is(err, mcp.ErrSessionMissing),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.ErrClosedPipe):
		class = ClassTransport
		if why := s.connectionLost(ctx, sess, err); why != nil {
			err, class = why, classOf(why, class)
		}
	case errors.As(err, &wire) && isReadCap(wire):
		class = ClassBound
	case errors.As(err, &wire):
		// The server answered.
	default:
		class = ClassProtocol
	}
	e := opError(ctx, s.cfg.Name, op, s.timeout, sess.scrub.error(withClass(class, err)), class)
	if class == ClassAuth {
		s.authLost(sess, e)
	}
	return e
}

// connectionLost handles an operation error that shows the connection is
// gone, and returns why it ended, if known. A stdio session ends by itself
// when its child exits, and the exit status says more than the read error: it
// is given a moment to end. Otherwise (an HTTP server went away, a session
// expired) the session is dropped at once.
func (s *server) connectionLost(ctx context.Context, sess *session, err error) error {
	if sess.proc != nil {
		if why := sess.reason(); why != nil {
			return why
		}
	}
	telemetry.Event(ctx, "connection_lost", telemetry.KeyServer.String(s.cfg.Name))
	lost := withClass(ClassTransport, fmt.Errorf("connection lost: %w", err))
	s.pool.goOwned(func() { sess.drop(lost) })
	return nil
}

// takeAuth returns and forgets the authorization failure the server
// answered an HTTP session's last requests with, if any.
func (sess *session) takeAuth() error {
	if sess.rt == nil {
		return nil
	}
	return sess.rt.takeAuth()
}

// authLost handles an authorization failure after connecting (a token
// expired or was revoked, or lacks a scope): the server needs auth until it
// answers again. go-sdk fails the connection on such an answer, so the
// session is dropped and the next operation connects afresh. The session
// may have ended already, and been detached as lost: the answer says why,
// unless another connection attempt came since.
func (s *server) authLost(sess *session, err error) {
	s.mu.Lock()
	current := s.sess == sess || s.sess == nil && s.dial == nil && s.gen == sess.gen
	if current {
		if s.sess == sess {
			s.sess = nil
			s.stopIdleLocked()
		}
		s.failLocked(err)
	}
	s.mu.Unlock()
	if current {
		s.pool.notify(s.cfg.Name)
	}
	s.pool.goOwned(func() { sess.drop(err) })
}

// ended reports whether the session has ended.
func (sess *session) ended() bool {
	select {
	case <-sess.done:
		return true
	default:
		return false
	}
}

// has reports whether the server declared a capability; a server that
// declared none is asked anyway.
func (sess *session) has(capability func(*mcp.ServerCapabilities) bool) bool {
	r := sess.cs.InitializeResult()
	if r == nil || r.Capabilities == nil {
		return true
	}
	return capability(r.Capabilities)
}
