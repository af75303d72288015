package gateway

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// Status returns every configured server's status, and every server whose
// definition is too broken to configure anything (state "invalid"), by
// name. It never connects. A server this engine has not used yet shows
// the last failure any process recorded in the catalog (see
// [catalog.Failure]): "needs-auth" after a refused authorization, "failed"
// after any other.
func (e *Engine) Status(ctx context.Context) []proxy.ServerStatus {
	live, fails := e.liveAndFailed(ctx)
	var out []proxy.ServerStatus
	for _, s := range e.cfg.Servers {
		st := proxy.ServerStatus{Name: s.Name, Transport: string(s.Type), Tools: -1}
		switch st.State = definitionState(e.cfg, s); st.State {
		case proxy.StateBlocked:
			st.Error = e.cfg.Err().Error()
		case proxy.StateInvalid:
			st.ErrorClass, st.Error = "config", s.Err.Error()
		case "":
			l := live[s.Name]
			st.State, st.Tools = string(l.State), l.Tools
			st.ErrorClass, st.Error, st.ErrorAt = string(l.ErrorClass), l.Error, l.ErrorAt
			if l.Fallback != "" {
				// A URL without a type that rejected Streamable HTTP.
				st.Transport = string(config.TransportSSE)
				st.Warnings = append(st.Warnings, l.Fallback)
			}
			if f, ok := fails[s.Name]; ok && untouched(l) && f.Hash == e.memo.hash(s) {
				st.State, st.ErrorClass, st.Error, st.ErrorAt = stateAfter(f.Class), f.Class, f.Error, f.At
			}
		}
		if ent, ok := e.cached(ctx, s); ok {
			if st.Tools < 0 {
				st.Tools = len(ent.Tools)
			}
			st.IndexedAt = ent.FetchedAt
			st.Headline = proxy.Headline(ent.Instructions, 80)
			st.Quarantined = len(e.quarantined(ctx, s.Name))
			st.Warnings = append(st.Warnings, e.approveWarnings(s.Name, ent)...)
		}
		if s.Packaged() {
			// A configured definition it shadows, which the user may look for.
			for _, p := range e.cfg.Warnings() {
				if p.Server == s.Name && strings.HasPrefix(p.Message, "shadowed:") {
					st.Warnings = append(st.Warnings, p.Error())
				}
			}
		}
		out = append(out, st)
	}
	out = append(out, e.dropped()...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// definitionState is the state of a server that its definition decides,
// without a connection: blocked when the configuration failed closed (no
// server from the files is usable; a host's packaged server still is),
// disabled, or invalid (the definition cannot be used); "" when the server
// may be used, and its connection tells its state. It follows
// config.Usable, as the CLI's status does where it has no engine.
func definitionState(c *config.Config, s *config.Server) string {
	switch {
	case c.Err() != nil && !s.Packaged():
		return proxy.StateBlocked
	case s.Disabled:
		return proxy.StateDisabled
	case s.Err != nil:
		return proxy.StateInvalid
	}
	return ""
}

// untouched reports whether this engine has not used a server yet.
func untouched(l upstream.Status) bool {
	return l.State == upstream.StateDisconnected && l.Generation == 0 && l.ErrorAt.IsZero()
}

// stateAfter is the state a recorded failure of a class leaves a server in.
func stateAfter(class string) string {
	if class == string(upstream.ClassAuth) {
		return string(upstream.StateNeedsAuth)
	}
	return string(upstream.StateFailed)
}

// dropped returns the servers whose definitions are so broken that the
// configuration holds no server of that name, each with its first error.
func (e *Engine) dropped() []proxy.ServerStatus {
	var out []proxy.ServerStatus
	seen := map[string]bool{}
	for _, p := range e.cfg.Errors() {
		if p.Server == "" || seen[p.Server] {
			continue
		}
		seen[p.Server] = true
		if _, ok := e.cfg.Server(p.Server); !ok {
			out = append(out, proxy.ServerStatus{Name: p.Server, State: proxy.StateInvalid, Tools: -1, ErrorClass: "config", Error: p.Error()})
		}
	}
	return out
}

// configStatus returns what status says of the configuration, or nil when
// there is nothing to say.
func (e *Engine) configStatus() *proxy.ConfigStatus {
	cs := &proxy.ConfigStatus{Blocked: e.cfg.Err() != nil, Ignored: ignoredProject(e.cfg)}
	for _, p := range e.cfg.Errors() {
		cs.Errors = append(cs.Errors, proxy.ConfigProblem{File: p.File, Line: p.Line, Col: p.Col, Path: p.Path, Server: p.Server, Message: p.Message})
	}
	if len(cs.Errors) == 0 && !cs.Blocked && cs.Ignored == nil {
		return nil
	}
	return cs
}

// ignoredProject describes the project files of an untrusted project, or
// returns nil.
func ignoredProject(c *config.Config) *proxy.IgnoredProject {
	p := c.Project
	if len(p.Files) == 0 || p.Trusted {
		return nil
	}
	ip := &proxy.IgnoredProject{Dir: p.Dir, Reason: "the project is not trusted",
		Hint: "review them, then run switchboard trust in " + p.Dir}
	if p.Changed {
		ip.Reason = "its definitions changed since you trusted it"
	}
	for _, f := range c.Files {
		if f.State == config.FileIgnored {
			ip.Files = append(ip.Files, proxy.IgnoredFile{Path: f.Path, Servers: append([]string{}, f.Servers...)})
		}
	}
	if len(ip.Files) == 0 {
		return nil
	}
	return ip
}

// untrusted explains a server name that is not configured but is defined
// in an ignored project file; it returns nil for any other name.
func (e *Engine) untrusted(name string) error {
	ip := ignoredProject(e.cfg)
	if ip == nil {
		return nil
	}
	for _, f := range ip.Files {
		for _, s := range f.Servers {
			if proxy.Normalize(s) == proxy.Normalize(name) {
				return fmt.Errorf("server %q is defined in %s, which is ignored: %s (hint: review it, then run switchboard trust in %s)",
					s, f.Path, ip.Reason, ip.Dir)
			}
		}
	}
	return nil
}

// untrustedPrefix is untrusted for a tool name prefixed with a server name.
func (e *Engine) untrustedPrefix(name string) error {
	ip := ignoredProject(e.cfg)
	if ip == nil {
		return nil
	}
	for _, f := range ip.Files {
		for _, s := range f.Servers {
			if rest, ok := strings.CutPrefix(proxy.Normalize(name), proxy.Normalize(s)+"_"); ok && rest != "" {
				return fmt.Errorf("tool %q: %w", name, e.untrusted(s))
			}
		}
	}
	return nil
}

// status lists every server without connecting, after the configuration's
// errors, and before the project files that are ignored.
func (s *Session) status(ctx context.Context) *proxy.Result {
	return proxy.Status(s.e.Status(ctx), s.e.configStatus(), time.Now())
}

// liveAndFailed returns the pool's connections by server and the failures
// the catalog recorded (a catalog that cannot be read is logged and gives
// none).
func (e *Engine) liveAndFailed(ctx context.Context) (map[string]upstream.Status, map[string]catalog.Failure) {
	live := map[string]upstream.Status{}
	for _, st := range e.pool.Snapshot() {
		live[st.Name] = st
	}
	fails, err := e.cat.Failures(ctx)
	if err != nil {
		e.log.Warn("reading failures", "err", err)
	}
	return live, fails
}
