package proxy

import (
	"fmt"
	"slices"
	"strings"
)

// States of a server in ServerStatus: those of its connection
// (disconnected, connecting, connected, failed, needs-auth), or of its
// definition.
const (
	StateConnected = "connected"
	StateFailed    = "failed"
	StateNeedsAuth = "needs-auth" // refused authorization: HTTP 401, or 403 insufficient_scope
	StateDisabled  = "disabled"
	StateInvalid   = "invalid" // this definition cannot be used
	StateBlocked   = "blocked" // the configuration has an error: no server is usable
)

// Searched is what a search found, for Search to render.
type Searched struct {
	Query   string
	Queries []string // the needs of a search of several, each hit's Need one of them
	Server  string   // the one server searched, or "" for all
	Offset  int
	Limit   int
	Regex   bool
	Servers []string      // the servers a search covers
	Failed  []ServerError // those that could not be searched, by name
	Hits    []ToolInfo    // descriptions in full
	Total   int           // hits in all, beyond Offset and Limit
	Hybrid  bool          // lexical and semantic ranking were fused
	Reason  string        // why a search with settings.embeddings is lexical

	// Disabled are the disabled servers searched (includeDisabled) and
	// Unknown those of them the catalog has nothing of; a hit of one is
	// marked Disabled. Shapes renders each hit's InputSchema (includeSchemas).
	Disabled []string
	Unknown  []string
	Off      int // disabled servers not searched (without includeDisabled)
	Shapes   bool
	Schemas  map[ToolRef]any // the input schemas of the hits, by tool, when Shapes
}

// Search is the answer of a search request: ranked tools by prefixed name,
// how the search ran, and the servers it could not search, with why.
func Search(s *Searched, a Audience) *Result {
	info := &SearchInfo{Query: s.Query, Queries: s.Queries, Mode: "lexical", Reason: s.Reason, Offset: s.Offset, Limit: s.Limit, Servers: s.Servers,
		Disabled: s.Disabled, Unknown: s.Unknown}
	switch {
	case s.Regex:
		info.Mode = "regex"
	case s.Hybrid:
		info.Mode = "hybrid"
	}
	failed := map[string]bool{}
	for _, f := range s.Failed {
		info.Failed = append(info.Failed, f.Server)
		failed[f.Server] = true
	}
	r := &Result{Details: Details{Operation: string(ActionSearch), Server: s.Server, Count: len(s.Hits), Total: s.Total, Search: info, Failed: s.Failed}}
	var lines []string
	where := searchedWhere(s.Server, s.Servers, len(s.Failed))
	switch {
	case len(s.Servers) > 0 && len(s.Failed) == len(s.Servers):
		lines = append(lines, fmt.Sprintf("nothing searched for %q: none of the %s could be searched", s.Query, plural(len(s.Servers), "server", "servers")))
	case len(s.Hits) == 0 && s.Total > 0:
		lines = append(lines, fmt.Sprintf("no more tools match %q on %s: %d in all, offset %d", s.Query, where, s.Total, s.Offset))
	case len(s.Hits) == 0 && len(s.Servers) == 0:
		lines = append(lines, fmt.Sprintf("no tools match %q: no server was searched", s.Query))
	case len(s.Hits) == 0:
		lines = append(lines, fmt.Sprintf("no tools match %q on %s (%s)", s.Query, where, strings.Join(Answered(s.Servers, failed), ", ")))
	default:
		head := fmt.Sprintf("%s %q on %s", plural(s.Total, "tool matches", "tools match"), s.Query, where)
		if len(s.Queries) > 1 {
			head = fmt.Sprintf("%s %d needs on %s", plural(s.Total, "tool matches", "tools match"), len(s.Queries), where)
		}
		if s.Hybrid {
			head += " (hybrid: lexical + semantic)"
		}
		if s.Total > len(s.Hits) {
			head += fmt.Sprintf("; showing %d-%d", s.Offset+1, s.Offset+len(s.Hits))
		}
		lines = append(lines, head+"; call with "+a.CallTool())
	}
	if info.Reason != "" {
		lines = append(lines, "note: "+Headline(info.Reason, 300))
	}
	for _, h := range s.Hits {
		h.Description = Headline(h.Description, 120)
		if s.Shapes {
			h.InputShape = tsShape(s.Schemas[ToolRef{Server: h.Server, Name: h.Name}], MaxHitShape)
		}
		r.Details.Tools = append(r.Details.Tools, h)
	}
	lines = append(lines, hitLines(s.Queries, r.Details.Tools)...)
	lines = append(lines, disabledLines(s)...)
	for _, f := range s.Failed {
		lines = append(lines, fmt.Sprintf("not searched: %q: %s", f.Server, brief(f.Error, 300)))
	}
	if len(s.Hits) == 0 && s.Total == 0 && !s.Regex && len(s.Failed) < len(s.Servers) {
		lines = append(lines, "hint: try other words, or "+a.ListTools()+" to list a server's tools")
	}
	if len(s.Hits) == 0 && s.Total == 0 && s.Off > 0 {
		lines = append(lines, fmt.Sprintf("hint: %s not searched; %s searches what the catalog kept of them", plural(s.Off, "disabled server is", "disabled servers are"), a.IncludeDisabled()))
	}
	return r.lines("search", lines)
}

// hitLines renders a search's tools, one line each. With several needs,
// they are grouped under the need they answer, in ranked order within
// each; a tool a need implies says which capability, and a tool several
// servers offer alike names the others.
func hitLines(needs []string, tools []ToolInfo) []string {
	line := func(t ToolInfo) string {
		l := toolLine(ToolRef{Server: t.Server, Name: t.Name}.Prefixed(), t.Description)
		if t.Implied != "" {
			l += " [implied: " + t.Implied + "]"
		}
		if len(t.Also) > 0 {
			l += " (also on " + listSome(t.Also, maxAlso) + ")"
		}
		if len(t.CannotRun) > 0 {
			l += " (cannot run now: " + listSome(t.CannotRun, maxAlso) + ")"
		}
		if t.Disabled {
			l += " (disabled)"
		}
		if t.InputShape != "" {
			l += "\n  args: " + t.InputShape
		}
		for _, w := range t.Why {
			l += "\n  why: " + w
		}
		return l
	}
	var lines []string
	if len(needs) < 2 {
		for _, t := range tools {
			lines = append(lines, line(t))
		}
		return lines
	}
	for i, q := range needs {
		if slices.Index(needs, q) < i {
			continue // the same query twice: its tools are under the first
		}
		lines = append(lines, fmt.Sprintf("need %d: %q", i+1, q))
		n := len(lines)
		for _, t := range tools {
			if t.Need == q {
				lines = append(lines, line(t))
			}
		}
		if len(lines) == n {
			lines = append(lines, "(no tools for it on this page)")
		}
	}
	return lines
}

// disabledLines say how to use a disabled server's tools, and which
// disabled servers the catalog knows nothing of.
func disabledLines(s *Searched) []string {
	var lines []string
	shown := map[string]bool{}
	for _, h := range s.Hits {
		if h.Disabled && !shown[h.Server] {
			shown[h.Server] = true
			lines = append(lines, fmt.Sprintf("%q is disabled: its tools are listed from the catalog and cannot be called (hint: switchboard enable %s)", h.Server, h.Server))
		}
	}
	if len(s.Unknown) > 0 {
		lines = append(lines, fmt.Sprintf("not in the catalog (disabled before they were indexed, or changed since; never started while disabled): %s", listSome(s.Unknown, MaxDescribedServers)))
	}
	return lines
}

// maxAlso bounds the servers a duplicated tool's line names.
const maxAlso = 5

// listSome joins up to n names, counting the rest.
func listSome(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// searchedWhere names what a search covered: one server, all of them, or
// how many of them answered.
func searchedWhere(server string, servers []string, failed int) string {
	switch {
	case server != "":
		return fmt.Sprintf("%q", server)
	case failed > 0:
		return fmt.Sprintf("%d of %d servers (%d could not be searched)", len(servers)-failed, len(servers), failed)
	}
	return plural(len(servers), "server", "servers")
}

// Answered returns the servers that are not in failed.
func Answered[V any](servers []string, failed map[string]V) []string {
	var out []string
	for _, s := range servers {
		if _, ok := failed[s]; !ok {
			out = append(out, s)
		}
	}
	return out
}

// UnreachedError is the error of a tool name that was not found while some
// of the servers it could be on could not be searched: the name may well
// be on one of those, so the error says why each failed. It matches
// ErrUnknownTool.
type UnreachedError struct {
	Name        string
	Answered    []string      // the servers searched
	Failed      []ServerError // the servers that could not be, with why, by name
	Suggestions []ToolRef     // close names on the servers searched
}

func (u *UnreachedError) Error() string {
	var b strings.Builder
	if len(u.Answered) == 0 {
		fmt.Fprintf(&b, "tool %q not found: none of the %s could be searched", u.Name, plural(len(u.Failed), "server", "servers"))
	} else {
		fmt.Fprintf(&b, "%v %q on the %s that answered (%s), but %d could not be searched",
			ErrUnknownTool, u.Name, plural(len(u.Answered), "server", "servers"), strings.Join(u.Answered, ", "), len(u.Failed))
	}
	if len(u.Suggestions) > 0 {
		var list []string
		for _, s := range u.Suggestions {
			list = append(list, fmt.Sprintf("%s (%s)", s.Name, s.Server))
		}
		b.WriteString("; did you mean: " + strings.Join(list, ", "))
	}
	for _, f := range u.Failed {
		fmt.Fprintf(&b, "\nnot searched: %q: %s", f.Server, brief(f.Error, 300))
	}
	return b.String()
}

// Is makes the error match ErrUnknownTool.
func (u *UnreachedError) Is(target error) bool { return target == ErrUnknownTool }
