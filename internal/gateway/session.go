package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// Session is one agent's view of the engine: the resource references it
// was given are its own. Connections and the catalog are shared by all
// sessions. Its methods are safe for concurrent use.
type Session struct {
	e *Engine

	mu    sync.Mutex
	refs  []resourceRef  // reference "rN" is refs[N-1], of any server
	byURI map[refKey]int // N of the references of current connections

	pol   sessionPolicy // approvals given for the session (approve.go)
	allow allowList     // nil: every tool (allow.go)
	ruled RuleFor       // the approval rules of the user's groups; nil: none (approve.go)
	who   Principal     // whom the audit trail names (principal.go)
}

// NewSession returns a session with no references of its own yet.
func (e *Engine) NewSession() *Session {
	return &Session{e: e, byURI: map[refKey]int{}}
}

// Handle carries out one call of the proxy tool with its raw JSON
// arguments. Invalid arguments are an error result that connects nothing.
func (s *Session) Handle(ctx context.Context, args json.RawMessage) *proxy.Result {
	req, err := proxy.Parse(args)
	if err != nil {
		return s.fit(proxy.ErrorResult("invalid", "", err))
	}
	return s.Do(ctx, req)
}

// Do carries out a parsed request. Its result is bounded as a whole (see
// fit).
func (s *Session) Do(ctx context.Context, req *proxy.Request) *proxy.Result {
	return s.fit(s.do(ctx, req))
}

func (s *Session) do(ctx context.Context, req *proxy.Request) *proxy.Result {
	if req.Server != "" {
		name, err := s.e.server(req.Server)
		if errors.Is(err, config.ErrDisabled) && req.Action == proxy.ActionSearch && req.IncludeDisabled {
			err = nil // searched in the catalog alone
		}
		if err != nil {
			return proxy.ErrorResult(req.Action, req.Server, err)
		}
		r := *req
		r.Server = name
		req = &r
	}
	switch req.Action {
	case proxy.ActionStatus:
		return s.status(ctx)
	case proxy.ActionServer:
		return s.serverTools(ctx, req.Server)
	case proxy.ActionSearch:
		return s.search(ctx, req)
	case proxy.ActionDescribe:
		return s.describe(ctx, req)
	case proxy.ActionCall:
		return s.call(ctx, req)
	case proxy.ActionResourcesList:
		return s.resources(ctx, req.Server)
	case proxy.ActionResourcesRead:
		return s.readResource(ctx, req.Server, req.Resource)
	case proxy.ActionPromptsList:
		return s.prompts(ctx, req.Server)
	case proxy.ActionPromptsGet:
		return s.getPrompt(ctx, req)
	case proxy.ActionInstructions:
		return s.instructions(ctx, req.Server)
	case proxy.ActionReconnect:
		return s.reconnect(ctx, req.Server)
	case proxy.ActionConnect:
		return s.connect(ctx, req.Server)
	case proxy.ActionAuthStart:
		return s.authStart(ctx, req.Server)
	case proxy.ActionAuthComplete:
		return s.authComplete(ctx, req)
	}
	return proxy.ErrorResult(req.Action, req.Server, fmt.Errorf("unsupported action %q: this is a bug", req.Action))
}

// server checks that name is configured and usable, with an error that
// lists the configured names when it is not.
func (e *Engine) server(name string) (string, error) {
	if s, ok := e.cfg.Server(name); ok {
		_, err := e.cfg.Usable(s.Name)
		return s.Name, err
	}
	// Names are matched ignoring case and - versus _, like tool names.
	for _, s := range e.cfg.Servers {
		if proxy.Normalize(s.Name) == proxy.Normalize(name) {
			_, err := e.cfg.Usable(s.Name)
			return s.Name, err
		}
	}
	_, err := e.cfg.Usable(name)
	if err == nil {
		err = errors.New("unknown server " + name)
	}
	if why := e.untrusted(name); why != nil && e.cfg.Err() == nil {
		err = why
	} else if errors.Is(err, config.ErrUnknownServer) {
		if near := proxy.Closest(name, e.cfg.Names(), 3); len(near) > 0 {
			err = fmt.Errorf("%w; did you mean: %s", err, strings.Join(near, ", "))
		}
	}
	return "", err
}
