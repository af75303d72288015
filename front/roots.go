package front

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
)

// Roots (Options.ForwardRoots): the client's roots are listed once it has
// initialized, and again each time it says they changed, and handed to the
// engine, which offers them to the servers whose configuration accepts
// them (roots: ["client"]) and tells those that are connected that they
// changed. Other servers never see them. Roots are a session feature of the revisions before
// 2026-07-28 (which deprecates them, SEP-2577): a client on 2026-07-28 has
// no initialized notification and its roots are not forwarded.

// acceptsClientRoots reports whether a server of cfg accepts the client's
// roots: without one, there is no reason to list them.
func acceptsClientRoots(cfg *config.Config) bool {
	for _, s := range cfg.Servers {
		if s.Roots != nil && s.Roots.Client && !s.Disabled {
			return true
		}
	}
	return false
}

// rootsTimeout bounds one listing of a client's roots. A call that arrives
// before the first listing has finished waits for it, at most this long.
const rootsTimeout = 10 * time.Second

// rootsMethods are the requests that may start or use a server, and so
// wait for the client's roots to be known first.
var rootsMethods = map[string]bool{
	"tools/call": true, "resources/read": true, "prompts/get": true, "completion/complete": true,
}

// rootsInitialized starts listing the roots of a client that has
// initialized, if it declared roots. Calls wait for the listing (see
// awaitRoots), so that a server the first call starts has the roots from
// its start.
func (s *Server) rootsInitialized(_ context.Context, req *mcp.InitializedRequest) {
	ss := req.Session
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.RootsV2 == nil {
		return
	}
	ready := make(chan struct{})
	s.mu.Lock()
	s.track(ss).rootsReady = ready
	s.mu.Unlock()
	s.listRoots(ss, ready)
}

// rootsChanged lists the client's roots again.
func (s *Server) rootsChanged(_ context.Context, req *mcp.RootsListChangedRequest) {
	s.listRoots(req.Session, nil)
}

// listRoots lists a client's roots in the background, hands them to the
// engine and closes ready, if not nil. Listings are made one at a time, so
// that the last one started is the last one applied.
func (s *Server) listRoots(ss *mcp.ServerSession, ready chan struct{}) {
	started := s.bg.Go(func() {
		if ready != nil {
			defer close(ready)
		}
		s.rootsMu.Lock()
		defer s.rootsMu.Unlock()
		ctx, cancel := context.WithTimeout(s.ctx, rootsTimeout)
		defer cancel()
		res, err := ss.ListRoots(ctx, nil)
		if err != nil {
			if s.ctx.Err() == nil {
				s.log.Warn("listing the client's roots to pass them on to servers", "err", err)
			}
			return
		}
		s.eng.SetRoots(res.Roots)
	})
	if !started && ready != nil {
		close(ready) // closed: nothing will list them
	}
}

// awaitRoots is receiving middleware that holds a call until the first
// listing of its client's roots has ended.
func (s *Server) awaitRoots(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && rootsMethods[method] && !s.rootsKnown(ctx, ss) {
			return nil, ctx.Err()
		}
		return next(ctx, method, req)
	}
}

// rootsKnown waits until the first listing of the roots of ss's client has
// ended, if the server forwards roots and one was started, and reports
// false if ctx ended first.
func (s *Server) rootsKnown(ctx context.Context, ss *mcp.ServerSession) bool {
	if !s.opts.ForwardRoots || ss == nil {
		return true
	}
	s.mu.Lock()
	var ready chan struct{}
	if cs := s.sessions[ss]; cs != nil {
		ready = cs.rootsReady
	}
	s.mu.Unlock()
	if ready == nil {
		return true
	}
	select {
	case <-ready:
		return true
	case <-ctx.Done():
		return false
	}
}
