package gateway

import (
	"context"
	"slices"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// broken returns the servers among servers that cannot run now, as far as
// the engine knows without connecting: a variable of the definition that
// is not set (or empty), a connection that failed (failed holds this
// search's), or a failure recorded in the catalog for the current
// definition by a process that used it last. Search lists the copy of a
// duplicated tool on a server that can run (see catalog.SearchOptions),
// and says which copies cannot.
func (e *Engine) broken(ctx context.Context, servers []string, failed map[string]error) map[string]bool {
	live, fails := e.liveAndFailed(ctx)
	var out map[string]bool
	mark := func(name string) {
		if out == nil {
			out = map[string]bool{}
		}
		out[name] = true
	}
	for _, name := range servers {
		s, ok := e.cfg.Server(name)
		l := live[name]
		switch {
		case !ok:
		case failed[name] != nil, s.Err != nil, e.unsetVariable(s.ReferenceList()):
			mark(name)
		case l.State == upstream.StateFailed || l.State == upstream.StateNeedsAuth:
			mark(name)
		case untouched(l):
			if f, ok := fails[name]; ok && f.Hash == e.memo.hash(s) {
				mark(name)
			}
		}
	}
	return out
}

// unsetVariable reports whether a definition refers to an environment
// variable, without a default, that is not set or empty.
func (e *Engine) unsetVariable(refs []config.Reference) bool {
	for _, r := range refs {
		if r.Secret || r.Default {
			continue
		}
		if v, ok := e.opts.Lookup(r.Name); !ok || v == "" {
			return true
		}
	}
	return false
}

// cannotRun returns the servers of copies that cannot run now, in order.
func cannotRun(broken map[string]bool, copies []string) []string {
	var out []string
	for _, s := range copies {
		if broken[s] && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
