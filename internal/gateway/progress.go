package gateway

import (
	"context"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress of a tool call, for a caller that asked for it with
// WithProgress: the call carries a progress token of the engine's own, and
// the engine's go-sdk clients hand each notification under that token to
// the caller's function. Notifications under any other token go to the
// ProgressNotificationHandler of Options.Client, if any (front's bridge,
// whose calls carry tokens of its own: WithProgressToken).

type progressKey struct{}

// WithProgressToken returns a context whose proxy tool call asks the
// server for progress notifications under token: a front that passes
// them on to its client under the client's own token gives one.
func WithProgressToken(ctx context.Context, token any) context.Context {
	return context.WithValue(ctx, progressKey{}, token)
}

func progressToken(ctx context.Context) any { return ctx.Value(progressKey{}) }

type progressFuncKey struct{}

// WithProgress returns a context whose tool calls ask the server for
// progress notifications and pass each to f (switchboard.WithProgress
// documents it).
func WithProgress(ctx context.Context, f func(*mcp.ProgressNotificationParams)) context.Context {
	if f == nil {
		return ctx
	}
	return context.WithValue(ctx, progressFuncKey{}, f)
}

// progressListeners are the tool calls in flight whose callers asked for
// their progress, by the token each call was given.
type progressListeners struct {
	mu      sync.Mutex
	next    int
	byToken map[string]*progressListener
}

// progressListener is one call's caller. mu is held while f runs, so that
// calls of f never overlap and none begins once the call has returned.
type progressListener struct {
	mu   sync.Mutex
	f    func(*mcp.ProgressNotificationParams)
	done bool
}

// start returns the progress token a call made with ctx sends (nil: none)
// and a function to call when the call has returned. A token given with
// WithProgressToken is sent as it is; a function given with WithProgress
// is called with the notifications under a token of the engine's own.
func (p *progressListeners) start(ctx context.Context) (token any, stop func()) {
	if tok := progressToken(ctx); tok != nil {
		return tok, func() {}
	}
	f, _ := ctx.Value(progressFuncKey{}).(func(*mcp.ProgressNotificationParams))
	if f == nil {
		return nil, func() {}
	}
	l := &progressListener{f: f}
	p.mu.Lock()
	if p.byToken == nil {
		p.byToken = map[string]*progressListener{}
	}
	p.next++
	tok := "switchboard-progress-" + strconv.Itoa(p.next)
	p.byToken[tok] = l
	p.mu.Unlock()
	return tok, func() {
		p.mu.Lock()
		delete(p.byToken, tok)
		p.mu.Unlock()
		l.mu.Lock()
		l.done = true
		l.mu.Unlock()
	}
}

// notify passes a notification to the caller whose call it belongs to,
// and reports whether there was one.
func (p *progressListeners) notify(params *mcp.ProgressNotificationParams) bool {
	if params == nil {
		return false
	}
	tok, ok := params.ProgressToken.(string)
	if !ok {
		return false
	}
	p.mu.Lock()
	l := p.byToken[tok]
	p.mu.Unlock()
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.f(params)
	}
	return true
}

// clientOptions returns the template of the go-sdk client options of every
// connection: Options.Client's, with progress notifications going first to
// the calls whose callers asked for them.
func (e *Engine) clientOptions() *mcp.ClientOptions {
	var o mcp.ClientOptions
	if e.opts.Client != nil {
		o = *e.opts.Client
	}
	next := o.ProgressNotificationHandler
	o.ProgressNotificationHandler = func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
		if e.progress.notify(req.Params) || next == nil {
			return
		}
		next(ctx, req)
	}
	return &o
}
