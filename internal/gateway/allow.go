package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
)

// A session's allow list (terret-mcp's, installed on one agent): patterns
// written mcp__SERVER__GLOB; once set, the session finds, describes and
// calls only the tools they match, deny by default. Other sessions of the
// engine are not affected.

// allowList holds the globs of each server's tools a session may use.
type allowList map[string][]string

// AllowOnly sets the session's allow list. Each pattern is
// mcp__SERVER__GLOB (mcp__github__* for every tool of github); none allows
// nothing. It replaces an earlier list.
func (s *Session) AllowOnly(patterns []string) error {
	a := allowList{}
	for _, p := range patterns {
		server, glob, ok := config.SplitToolPattern(p)
		if !ok || glob == "" {
			return fmt.Errorf("allow list: %q is not mcp__SERVER__GLOB (mcp__github__* for every tool of github, mcp__github__get_* for some)", p)
		}
		a[server] = append(a[server], glob)
	}
	s.mu.Lock()
	s.allow = a
	s.mu.Unlock()
	return nil
}

func (s *Session) allowList() allowList {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allow
}

// errNotAllowed is matched by the error of a tool outside the session's
// allow list.
var errNotAllowed = errors.New("not in this session's allow list")

// allowed returns nil when the session may use a server's tool.
func (s *Session) allowed(server, tool string) error {
	a := s.allowList()
	if a == nil || slices.ContainsFunc(a[server], func(g string) bool { return config.Glob(g, tool) }) {
		return nil
	}
	return fmt.Errorf("tool %q on %q is %w; nothing was called (hint: the host that made this session decides what it may use)", tool, server, errNotAllowed)
}

// allowedServers keeps the servers the session's allow list names.
func (s *Session) allowedServers(servers []string) []string {
	a := s.allowList()
	if a == nil {
		return servers
	}
	return slices.DeleteFunc(slices.Clone(servers), func(name string) bool { return a[name] == nil })
}

// allowedTools keeps the tools of a server the session may use.
func (s *Session) allowedTools(server string, tools []*mcp.Tool) []*mcp.Tool {
	if s.allowList() == nil {
		return tools
	}
	return slices.DeleteFunc(slices.Clone(tools), func(t *mcp.Tool) bool { return s.allowed(server, t.Name) != nil })
}

// excludeDenied adds to ex, by server, the tools the catalog knows that
// the session's allow list does not let it find.
func (s *Session) excludeDenied(ctx context.Context, servers []string, ex map[string][]string) map[string][]string {
	if s.allowList() == nil {
		return ex
	}
	for _, name := range servers {
		ent, ok := s.e.Cached(ctx, name)
		if !ok {
			continue
		}
		for _, t := range ent.Tools {
			if s.allowed(name, t.Name) != nil {
				if ex == nil {
					ex = map[string][]string{}
				}
				ex[name] = append(ex[name], t.Name)
			}
		}
	}
	return ex
}
