package switchboard

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/proxy"
	"github.com/switchboard-mcp/switchboard/upstream"
)

// ServerStatus is what is known of one configured server, without
// connecting to it.
type ServerStatus struct {
	Name       string    `json:"name"`
	State      string    `json:"state"`
	Transport  string    `json:"transport"`
	Tools      int       `json:"tools"` // -1 when not known
	ErrorClass string    `json:"errorClass,omitempty"`
	Error      string    `json:"error,omitempty"`
	ErrorAt    time.Time `json:"errorAt,omitzero"`
	IndexedAt  time.Time `json:"indexedAt,omitzero"`
	Headline   string    `json:"headline,omitempty"` // first line of the server's instructions
	// Quarantined counts the tools whose definition changed since it was
	// approved (docs/policy.md).
	Quarantined int `json:"quarantined,omitempty"`
	// Warnings are problems of the server's policy found against its
	// tools, such as an approve glob that matches none.
	Warnings []string `json:"warnings,omitempty"`
}

// Status returns every configured server's status, and every server whose
// definition is too broken to configure anything (state "invalid"), by
// name. It never connects. A server this engine has not used yet shows
// the last failure any process recorded in the catalog (see
// [catalog.Failure]): "needs-auth" after a refused authorization, "failed"
// after any other.
func (e *Engine) Status(ctx context.Context) []ServerStatus {
	live := map[string]upstream.Status{}
	for _, st := range e.pool.Snapshot() {
		live[st.Name] = st
	}
	fails, err := e.cat.Failures(ctx)
	if err != nil {
		e.log.Warn("reading failures", "err", err)
	}
	var out []ServerStatus
	for _, s := range e.cfg.Servers {
		st := ServerStatus{Name: s.Name, Transport: string(s.Type), Tools: -1}
		switch {
		case e.cfg.Err() != nil:
			st.State, st.Error = "blocked", e.cfg.Err().Error()
		case s.Disabled:
			st.State = "disabled"
		case s.Err != nil:
			st.State, st.ErrorClass, st.Error = "invalid", "config", s.Err.Error()
		default:
			l := live[s.Name]
			st.State, st.Tools = string(l.State), l.Tools
			st.ErrorClass, st.Error, st.ErrorAt = string(l.ErrorClass), l.Error, l.ErrorAt
			if f, ok := fails[s.Name]; ok && untouched(l) && f.Hash == e.memo.hash(s) {
				st.State, st.ErrorClass, st.Error, st.ErrorAt = stateAfter(f.Class), f.Class, f.Error, f.At
			}
		}
		if ent, ok := e.cached(ctx, s); ok {
			if st.Tools < 0 {
				st.Tools = len(ent.Tools)
			}
			st.IndexedAt = ent.FetchedAt
			st.Headline = headline(ent.Instructions, 80)
			st.Quarantined = len(e.quarantined(ctx, s.Name))
			st.Warnings = e.approveWarnings(s.Name, ent)
		}
		out = append(out, st)
	}
	out = append(out, e.dropped()...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
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
func (e *Engine) dropped() []ServerStatus {
	var out []ServerStatus
	seen := map[string]bool{}
	for _, p := range e.cfg.Errors() {
		if p.Server == "" || seen[p.Server] {
			continue
		}
		seen[p.Server] = true
		if _, ok := e.cfg.Server(p.Server); !ok {
			out = append(out, ServerStatus{Name: p.Server, State: "invalid", Tools: -1, ErrorClass: "config", Error: p.Error()})
		}
	}
	return out
}

// ConfigStatus is what status says of the configuration itself: the errors
// that keep servers from being used, and the project files left out.
type ConfigStatus struct {
	// Errors are the configuration's errors, each naming its file and,
	// where known, line and column.
	Errors []ConfigProblem `json:"errors,omitempty"`
	// Blocked is set when an error fails the configuration closed: no
	// server is usable until it is fixed.
	Blocked bool `json:"blocked,omitempty"`
	// Ignored is the project's files that do not count until the project
	// is trusted.
	Ignored *IgnoredProject `json:"ignored,omitempty"`
}

// ConfigProblem is one configuration error.
type ConfigProblem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Path    string `json:"path,omitempty"` // JSON path, such as mcpServers.github.env
	Server  string `json:"server,omitempty"`
	Message string `json:"message"`
}

// IgnoredProject is a project whose files are ignored until it is trusted.
type IgnoredProject struct {
	Dir    string        `json:"dir"`
	Reason string        `json:"reason"`
	Files  []IgnoredFile `json:"files"`
	Hint   string        `json:"hint"` // what to do: review, then switchboard trust
}

// IgnoredFile is one ignored project file and the servers it defines.
type IgnoredFile struct {
	Path    string   `json:"path"`
	Servers []string `json:"servers"`
}

// configStatus returns what status says of the configuration, or nil when
// there is nothing to say.
func (e *Engine) configStatus() *ConfigStatus {
	cs := &ConfigStatus{Blocked: e.cfg.Err() != nil, Ignored: ignoredProject(e.cfg)}
	for _, p := range e.cfg.Errors() {
		cs.Errors = append(cs.Errors, ConfigProblem{File: p.File, Line: p.Line, Col: p.Col, Path: p.Path, Server: p.Server, Message: p.Message})
	}
	if len(cs.Errors) == 0 && !cs.Blocked && cs.Ignored == nil {
		return nil
	}
	return cs
}

// ignoredProject describes the project files of an untrusted project, or
// returns nil.
func ignoredProject(c *config.Config) *IgnoredProject {
	p := c.Project
	if len(p.Files) == 0 || p.Trusted {
		return nil
	}
	ip := &IgnoredProject{Dir: p.Dir, Reason: "the project is not trusted",
		Hint: "review them, then run switchboard trust in " + p.Dir}
	if p.Changed {
		ip.Reason = "its definitions changed since you trusted it"
	}
	for _, f := range c.Files {
		if f.State == config.FileIgnored {
			ip.Files = append(ip.Files, IgnoredFile{Path: f.Path, Servers: append([]string{}, f.Servers...)})
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
			if normalize(s) == normalize(name) {
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
			if rest, ok := strings.CutPrefix(normalize(name), normalize(s)+"_"); ok && rest != "" {
				return fmt.Errorf("tool %q: %w", name, e.untrusted(s))
			}
		}
	}
	return nil
}

// status lists every server without connecting, after the configuration's
// errors, and before the project files that are ignored.
func (s *Session) status(ctx context.Context) *Result {
	sts := s.e.Status(ctx)
	cs := s.e.configStatus()
	r := &Result{Details: Details{Operation: string(proxy.ActionStatus), Servers: sts, Count: len(sts), Config: cs}}
	lines := configLines(s.e.cfg)
	lines = append(lines, serverLines(sts, cs == nil, time.Now())...)
	if cs != nil {
		lines = append(lines, ignoredLines(cs.Ignored)...)
	}
	return s.bounded(r, "status", lines)
}

// configLines are the configuration's errors, as file:line:col: message.
func configLines(c *config.Config) []string {
	errs := c.Errors()
	if len(errs) == 0 {
		return nil
	}
	head := "configuration errors:"
	if c.Err() != nil {
		head = "configuration errors (no server is usable until they are fixed; hint: switchboard config validate):"
	}
	lines := []string{head}
	for _, p := range errs {
		lines = append(lines, "  "+p.Error())
	}
	return lines
}

// serverLines are one line per server, after a count. hint adds how to
// configure a server when there is none and nothing else explains why.
func serverLines(sts []ServerStatus, hint bool, now time.Time) []string {
	if len(sts) == 0 {
		if hint {
			return []string{"no servers configured (hint: switchboard add NAME -- COMMAND ARGS…)"}
		}
		return []string{"no servers configured"}
	}
	connected := 0
	for _, st := range sts {
		if st.State == string(upstream.StateConnected) {
			connected++
		}
	}
	lines := []string{fmt.Sprintf("%s (%d connected)", plural(len(sts), "server", "servers"), connected)}
	for _, st := range sts {
		lines = append(lines, serverLine(st, now))
	}
	return lines
}

func serverLine(st ServerStatus, now time.Time) string {
	line := st.Name + "  " + st.State
	if st.Tools >= 0 {
		line += "  " + plural(st.Tools, "tool", "tools")
	}
	if !st.IndexedAt.IsZero() {
		line += fmt.Sprintf("  indexed %s ago", age(now, st.IndexedAt))
	}
	switch {
	case st.State == "blocked":
		// The configuration's errors, above, say why.
	case st.ErrorClass == "config" && st.ErrorAt.IsZero():
		line += ": " + brief(st.Error, 300)
	case st.Error != "":
		line += fmt.Sprintf("  last error (%s, %s ago): %s", orDash(st.ErrorClass), age(now, st.ErrorAt), brief(st.Error, 300))
	}
	if st.Quarantined > 0 {
		line += fmt.Sprintf("  %d quarantined (changed; see describe, then switchboard approve)", st.Quarantined)
	}
	if st.Headline != "" {
		line += "  — " + st.Headline
	}
	for _, w := range st.Warnings {
		line += "\n  warning: " + w
	}
	return line
}

// ignoredLines name the ignored project files, why, and what to do.
func ignoredLines(ip *IgnoredProject) []string {
	if ip == nil {
		return nil
	}
	lines := []string{fmt.Sprintf("ignored project files (%s):", ip.Reason)}
	for _, f := range ip.Files {
		servers := "no servers"
		if len(f.Servers) > 0 {
			servers = "servers: " + strings.Join(f.Servers, ", ")
		}
		lines = append(lines, fmt.Sprintf("  %s (%s)", f.Path, servers))
	}
	return append(lines, "hint: "+ip.Hint)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func age(now, t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return now.Sub(t).Round(time.Second).String()
}
