package front

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// In transparent mode the gateway asks the server, on its clients' behalf,
// for log messages and resource updates. Clients share one connection to
// the server, so it asks for the union: the most verbose log level any
// client set (go-sdk then sends each client only what its own level lets
// through), and every resource some client subscribed to, until the last
// one unsubscribes or goes away.

// logLevels is receiving middleware that follows logging/setLevel.
func (s *Server) logLevels(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "logging/setLevel" {
			return res, err
		}
		ss, ok := req.GetSession().(*mcp.ServerSession)
		p, pok := req.GetParams().(*mcp.SetLoggingLevelParams)
		if !ok || !pok || ss == nil {
			return res, err
		}
		s.mu.Lock()
		s.track(ss).level = p.Level
		s.mu.Unlock()
		if err := s.syncLevel(ctx); err != nil {
			return nil, err
		}
		return res, nil
	}
}

// syncLevel asks the server for the most verbose level a client set, if
// that changed.
func (s *Server) syncLevel(ctx context.Context) error {
	s.mu.Lock()
	var want mcp.LoggingLevel
	for _, cs := range s.sessions {
		if cs.level != "" && (want == "" || levelRank[cs.level] < levelRank[want]) {
			want = cs.level
		}
	}
	same := want == s.level
	s.level = want
	s.mu.Unlock()
	if same {
		return nil
	}
	return s.eng.SetLoggingLevel(ctx, s.single, want)
}

// levelRank orders the levels of RFC 5424, most verbose first.
var levelRank = map[mcp.LoggingLevel]int{
	"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7,
}

func (s *Server) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	s.mu.Lock()
	cs := s.track(req.Session)
	if cs.subs == nil {
		cs.subs = map[string]bool{}
	}
	cs.subs[uri] = true
	first := s.subscribers(uri) == 1
	s.mu.Unlock()
	if !first {
		return nil
	}
	if err := s.eng.SubscribeResource(ctx, s.single, uri); err != nil {
		s.mu.Lock()
		delete(cs.subs, uri)
		s.mu.Unlock()
		return err
	}
	return nil
}

func (s *Server) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	uri := req.Params.URI
	s.mu.Lock()
	cs := s.track(req.Session)
	had := cs.subs[uri]
	delete(cs.subs, uri)
	last := had && s.subscribers(uri) == 0
	s.mu.Unlock()
	if !last {
		return nil
	}
	return s.eng.UnsubscribeResource(ctx, s.single, uri)
}

// subscribers counts the client sessions subscribed to uri. s.mu must be
// held.
func (s *Server) subscribers(uri string) int {
	n := 0
	for _, cs := range s.sessions {
		if cs.subs[uri] {
			n++
		}
	}
	return n
}

// forget gives up what an ended client session asked of the server.
func (s *Server) forget(cs *clientSession) {
	if s.single == "" {
		return
	}
	ctx := s.ctx
	s.mu.Lock()
	var gone []string
	for uri := range cs.subs {
		if s.subscribers(uri) == 0 {
			gone = append(gone, uri)
		}
	}
	s.mu.Unlock()
	for _, uri := range gone {
		if err := s.eng.UnsubscribeResource(ctx, s.single, uri); err != nil {
			s.log.Warn("unsubscribing from a resource no client follows", "err", err)
		}
	}
	if err := s.syncLevel(ctx); err != nil {
		s.log.Warn("setting the server's log level", "err", err)
	}
}
