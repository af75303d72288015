package front

import (
	"context"

	"github.com/switchboard-mcp/switchboard/proxy"
)

// A server whose directTools is "search" offers no direct tool at first:
// its tools cost the client's context nothing until the agent finds one.
// A tool that a search or a describe of the mcp tool shows becomes a
// direct tool from then on, and the client is told (tools/list_changed).
// The tools are the gateway's, shared by its clients: over HTTP, what one
// client's agent found, the others see too. settings.freezeDirectTools
// wins: a frozen gateway adds none.

// wasShown reports whether a search or describe showed a tool of an
// on-demand server.
func (s *Server) wasShown(server, tool string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shown[server][tool]
}

// activate makes the tools of on-demand servers that an answer of the mcp
// tool shows direct tools.
func (s *Server) activate(ctx context.Context, d *proxy.Details) {
	if s.single != "" || s.cfg.Settings.FreezeDirectTools || d.IsError {
		return
	}
	var shown []proxy.ToolInfo
	switch {
	case d.Operation == "search":
		shown = d.Tools
	case d.Tool != nil && !d.Tool.Held:
		shown = []proxy.ToolInfo{{Server: d.Tool.Server, Name: d.Tool.Name}}
	}
	added := false
	s.mu.Lock()
	for _, t := range shown {
		srv, ok := s.cfg.Server(t.Server)
		if !ok || !srv.DirectTools.OnDemand || t.Held || s.shown[t.Server][t.Name] {
			continue
		}
		if s.shown == nil {
			s.shown = map[string]map[string]bool{}
		}
		if s.shown[t.Server] == nil {
			s.shown[t.Server] = map[string]bool{}
		}
		s.shown[t.Server][t.Name] = true
		added = true
	}
	s.mu.Unlock()
	if added {
		s.syncDirect(ctx, false)
	}
}
