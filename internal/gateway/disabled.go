package gateway

import (
	"context"
	"fmt"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
)

// A disabled server was turned off by the user: it is never started, and
// only a search that asks for it (includeDisabled) shows what the catalog
// kept of it from before it was disabled. The catalog keys entries by a
// hash that leaves "disabled" out, so that entry is the server's as long
// as nothing else of its definition changed.

// disabled returns the disabled servers whose definitions are valid, or
// only server when it is one of them. A configuration that failed closed
// has none: it may have meant to keep any of them.
func (e *Engine) disabled(server string) []*config.Server {
	if e.cfg.Err() != nil {
		return nil
	}
	var out []*config.Server
	for _, s := range e.cfg.Servers {
		if s.Disabled && s.Err == nil && (server == "" || s.Name == server) {
			out = append(out, s)
		}
	}
	return out
}

// isDisabled reports whether server is a disabled server.
func (e *Engine) isDisabled(server string) bool {
	return len(e.disabled(server)) > 0
}

// disabledEntries returns what the catalog kept of the disabled servers
// (or of server alone): their names and entries, and the names of those
// it has nothing of. It never connects.
func (e *Engine) disabledEntries(ctx context.Context, server string) (names []string, entries []*catalog.Entry, unknown []string) {
	for _, s := range e.disabled(server) {
		if ent, ok := e.cached(ctx, s); ok {
			names, entries = append(names, s.Name), append(entries, ent)
		} else {
			unknown = append(unknown, s.Name)
		}
	}
	return names, entries, unknown
}

// disabledTool returns the error of a tool name that no usable server has
// and a disabled server had: the server is disabled, and how to enable
// it. It returns nil when no disabled server had the name.
func (e *Engine) disabledTool(ctx context.Context, name string) error {
	servers, entries, _ := e.disabledEntries(ctx, "")
	if len(servers) == 0 {
		return nil
	}
	names, _ := e.memo.names(servers, entries)
	ref, err := names.Resolve(name, "")
	if err != nil {
		return nil
	}
	return fmt.Errorf("tool %q is on server %q, which is disabled: it is not started or called until it is enabled (hint: switchboard enable %s)", ref.Name, ref.Server, ref.Server)
}
