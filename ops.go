package switchboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/bound"
	"github.com/switchboard-mcp/switchboard/catalog"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// serverTools connects a server and lists its tools.
func (s *Session) serverTools(ctx context.Context, server string) *Result {
	ent, err := s.e.entry(ctx, server)
	if err != nil {
		return s.errorResult(proxy.ActionServer, server, err)
	}
	r := &Result{Details: Details{Operation: string(proxy.ActionServer), Server: server, Count: len(ent.Tools)}}
	lines := []string{fmt.Sprintf("%s on %q", plural(len(ent.Tools), "tool", "tools"), server)}
	q := s.e.quarantined(ctx, server)
	for _, t := range sortedTools(ent.Tools) {
		info := ToolInfo{Server: server, Name: t.Name, Title: t.Title, Description: headline(t.Description, 120), Changed: q[t.Name] != nil}
		r.Details.Tools = append(r.Details.Tools, info)
		line := toolLine(t.Name, info.Description)
		if info.Changed {
			line = changedMark + " " + line
		}
		lines = append(lines, line)
	}
	if h := headline(ent.Instructions, 200); h != "" {
		lines = append(lines, "instructions: "+h)
	}
	for _, w := range s.e.approveWarnings(server, ent) {
		lines = append(lines, "warning: "+w)
	}
	return s.bounded(r, "tools-"+server, lines)
}

func sortedTools(tools []*mcp.Tool) []*mcp.Tool {
	out := append([]*mcp.Tool(nil), tools...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func toolLine(name, desc string) string {
	if desc == "" {
		return name
	}
	return name + " — " + desc
}

// entry returns a server's catalog entry, connecting and indexing it first
// when the catalog does not know its current definition, or when it is
// not connected (unless it may not be started offline).
func (e *Engine) entry(ctx context.Context, server string) (*catalog.Entry, error) {
	s, _ := e.cfg.Server(server)
	if ent, ok := e.cached(ctx, s); ok && (e.connected(server) || s.Offline != "") {
		return ent, nil
	}
	ent, err := e.fetch(ctx, server, true)
	if err != nil {
		return nil, err
	}
	if err := e.put(ctx, ent); err != nil {
		e.log.Warn("writing the catalog", "server", server, "err", err)
	}
	return ent, nil
}

// search ranks tools across servers, indexing never-seen ones first. It
// answers only from the catalog entries of the servers' current
// definitions: a server that could not be indexed as it is now is not
// searched, and the answer says why. With settings.embeddings the search
// is hybrid when it can be, and says why when it is lexical instead.
func (s *Session) search(ctx context.Context, req *proxy.Request) *Result {
	servers := s.e.searchable(req.Server)
	failed := s.e.ensureIndexed(ctx, servers)
	if err := failed[req.Server]; req.Server != "" && err != nil {
		return s.errorResult(proxy.ActionSearch, req.Server, err)
	}
	opts := catalog.SearchOptions{Servers: servers, Hashes: s.e.hashes(servers), Limit: req.Limit, Offset: req.Offset, Regex: req.Regex}
	info := &SearchInfo{Query: req.Query, Mode: "lexical", Offset: req.Offset, Limit: req.Limit, Servers: servers}
	current := answered(servers, failed)
	switch {
	case req.Regex:
		info.Mode = "regex"
	case len(current) == 0:
		// Nothing to search: no query to embed.
	default:
		if vec, why := s.e.semantic(ctx, req.Query, current); vec != nil {
			opts.Embedding, opts.Model = vec, s.e.emb.model()
		} else {
			info.Reason = why
		}
	}
	res, err := s.e.cat.Search(ctx, req.Query, opts)
	if err != nil {
		return s.errorResult(proxy.ActionSearch, req.Server, err)
	}
	switch {
	case res.Hybrid:
		info.Mode = "hybrid"
	case opts.Embedding != nil:
		info.Reason = "the stored embeddings do not fit the query's (another model answered?); lexical only (hint: switchboard index)"
	}
	for _, name := range res.Skipped {
		if failed[name] == nil { // indexed, then overwritten by another process
			if failed == nil {
				failed = map[string]error{}
			}
			failed[name] = fmt.Errorf("the catalog has no entry for its current definition (hint: switchboard index %s)", name)
		}
	}
	info.Failed = append(info.Failed, sortedKeys(failed)...)
	r := &Result{Details: Details{Operation: string(proxy.ActionSearch), Server: req.Server, Count: len(res.Results), Total: res.Total, Search: info,
		Failed: serverErrors(failed)}}
	var lines []string
	where := searchedWhere(req.Server, servers, failed)
	switch {
	case len(servers) > 0 && len(failed) == len(servers):
		lines = append(lines, fmt.Sprintf("nothing searched for %q: none of the %s could be searched", req.Query, plural(len(servers), "server", "servers")))
	case len(res.Results) == 0 && res.Total > 0:
		lines = append(lines, fmt.Sprintf("no more tools match %q on %s: %d in all, offset %d", req.Query, where, res.Total, req.Offset))
	case len(res.Results) == 0:
		lines = append(lines, fmt.Sprintf("no tools match %q on %s (%s)", req.Query, where, strings.Join(answered(servers, failed), ", ")))
	default:
		head := fmt.Sprintf("%s %q on %s", plural(res.Total, "tool matches", "tools match"), req.Query, where)
		if res.Hybrid {
			head += " (hybrid: lexical + semantic)"
		}
		if res.Total > len(res.Results) {
			head += fmt.Sprintf("; showing %d-%d", req.Offset+1, req.Offset+len(res.Results))
		}
		lines = append(lines, head+"; call with "+s.e.opts.Audience.CallTool())
	}
	if info.Reason != "" {
		lines = append(lines, "note: "+headline(info.Reason, 300))
	}
	for _, h := range res.Results {
		ti := ToolInfo{Server: h.Server, Name: h.Name, Title: h.Title, Description: headline(h.Description, 120), Score: h.Score}
		r.Details.Tools = append(r.Details.Tools, ti)
		lines = append(lines, toolLine(proxy.ToolRef{Server: h.Server, Name: h.Name}.Prefixed(), ti.Description))
	}
	for _, name := range info.Failed {
		lines = append(lines, fmt.Sprintf("not searched: %q: %s", name, brief(failed[name].Error(), 300)))
	}
	if len(res.Results) == 0 && res.Total == 0 && !req.Regex && len(failed) < len(servers) {
		lines = append(lines, "hint: try other words, or "+s.e.opts.Audience.ListTools()+" to list a server's tools")
	}
	return s.bounded(r, "search", lines)
}

// hashes returns the hash of each server's current definition.
func (e *Engine) hashes(servers []string) map[string]string {
	out := make(map[string]string, len(servers))
	for _, name := range servers {
		s, _ := e.cfg.Server(name)
		out[name] = e.memo.hash(s)
	}
	return out
}

// searchedWhere names what a search covered: one server, all of them, or
// how many of them answered.
func searchedWhere(server string, servers []string, failed map[string]error) string {
	switch {
	case server != "":
		return fmt.Sprintf("%q", server)
	case len(failed) > 0:
		return fmt.Sprintf("%d of %d servers (%d could not be searched)", len(servers)-len(failed), len(servers), len(failed))
	}
	return plural(len(servers), "server", "servers")
}

// answered returns the servers that are not keys of failed.
func answered(servers []string, failed map[string]error) []string {
	var out []string
	for _, s := range servers {
		if failed[s] == nil {
			out = append(out, s)
		}
	}
	return out
}

// searchable returns the servers a search covers.
func (e *Engine) searchable(server string) []string {
	if server != "" {
		return []string{server}
	}
	var out []string
	for _, s := range e.usable() {
		out = append(out, s.Name)
	}
	return out
}

// resolve finds the tool a request names, from the catalog, indexing
// servers the catalog does not know yet only when the name is not found.
func (e *Engine) resolve(ctx context.Context, name, server string) (proxy.ToolRef, *mcp.Tool, error) {
	servers := e.searchable(server)
	lookup := func() (*proxy.Names, map[string][]*mcp.Tool) {
		entries := make([]*catalog.Entry, len(servers))
		for i, n := range servers {
			s, _ := e.cfg.Server(n)
			entries[i], _ = e.cached(ctx, s)
		}
		return e.memo.names(servers, entries)
	}
	names, tools := lookup()
	ref, err := names.Resolve(name, server)
	var failed map[string]error
	if err != nil && len(tools) < len(servers) {
		failed = e.ensureIndexed(ctx, servers)
		names, tools = lookup()
		ref, err = names.Resolve(name, server)
	}
	if err != nil {
		return proxy.ToolRef{}, nil, e.unresolved(name, server, err, names, servers, failed)
	}
	for _, t := range tools[ref.Server] {
		if t.Name == ref.Name {
			return ref, t, nil
		}
	}
	return ref, nil, nil
}

// unresolved says why a tool name was not found, truthfully: with server
// given and that server unreachable, its own error (a failed start, an
// unset variable, a timeout, a refused authorization); without it, which
// servers could not be searched and why; for a name prefixed with a server
// of an ignored project file, that the project is not trusted.
func (e *Engine) unresolved(name, server string, err error, names *proxy.Names, servers []string, failed map[string]error) error {
	if ferr := failed[server]; server != "" && ferr != nil {
		return ferr
	}
	if server != "" || !errors.Is(err, proxy.ErrUnknownTool) {
		return err
	}
	if why := e.untrustedPrefix(name); why != nil {
		return why
	}
	if len(failed) == 0 {
		return err
	}
	return &unreachedError{name: name, answered: answered(servers, failed), failed: failed, sugg: names.Suggest(name, "", 5)}
}

// describe shows one tool in full, from the catalog when it can.
func (s *Session) describe(ctx context.Context, req *proxy.Request) *Result {
	ref, t, err := s.e.resolve(ctx, req.Name, req.Server)
	if err != nil {
		return s.errorResult(proxy.ActionDescribe, req.Server, err)
	}
	if t == nil {
		return s.errorResult(proxy.ActionDescribe, ref.Server, fmt.Errorf("tool %q on %q is not in the catalog: this is a bug", ref.Name, ref.Server))
	}
	d := &ToolDetail{Server: ref.Server, Name: ref.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations}
	r := &Result{Details: Details{Operation: string(proxy.ActionDescribe), Server: ref.Server, Count: 1, Tool: d}}
	lines := []string{fmt.Sprintf("tool %q on %q (call as %q)", ref.Name, ref.Server, ref.Prefixed())}
	if t.Title != "" {
		lines = append(lines, "title: "+t.Title)
	}
	if t.Description != "" {
		lines = append(lines, t.Description)
	}
	if a := annotationText(t.Annotations); a != "" {
		lines = append(lines, "annotations: "+a)
	}
	lines = append(lines, "input schema: "+compactJSON(t.InputSchema))
	if t.OutputSchema != nil {
		lines = append(lines, "output schema: "+compactJSON(t.OutputSchema))
	}
	if q := s.e.quarantined(ctx, ref.Server)[ref.Name]; q != nil {
		d.Changed = true
		lines = append(lines, quarantineLines(q)...)
	}
	return s.bounded(r, "describe-"+ref.Name, lines)
}

func annotationText(a *mcp.ToolAnnotations) string {
	if a == nil {
		return ""
	}
	var parts []string
	if a.ReadOnlyHint {
		parts = append(parts, "read-only")
	}
	if a.DestructiveHint != nil && *a.DestructiveHint {
		parts = append(parts, "destructive")
	}
	if a.IdempotentHint {
		parts = append(parts, "idempotent")
	}
	if a.OpenWorldHint != nil && *a.OpenWorldHint {
		parts = append(parts, "open-world")
	}
	return strings.Join(parts, ", ")
}

func compactJSON(v any) string {
	if v == nil {
		return "{}"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

// call calls a tool exactly once.
func (s *Session) call(ctx context.Context, req *proxy.Request) *Result {
	ref, t, err := s.e.resolve(ctx, req.Name, req.Server)
	if err != nil {
		return s.errorResult(proxy.ActionCall, req.Server, err)
	}
	params := &mcp.CallToolParams{Name: ref.Name, Arguments: req.Args}
	if tok := progressToken(ctx); tok != nil {
		params.SetProgressToken(tok)
	}
	res, err := s.send(ctx, ref, t, params)
	if err != nil {
		return s.errorResult(proxy.ActionCall, ref.Server, err)
	}
	conv, err := s.e.spill.Convert("call-"+ref.Name, res.Content, res.StructuredContent)
	if err != nil {
		return s.errorResult(proxy.ActionCall, ref.Server, err)
	}
	r := &Result{Text: conv.Text, Images: conv.Images, IsError: res.IsError, name: "call-" + ref.Name, Details: Details{
		Operation: string(proxy.ActionCall), Server: ref.Server, IsError: res.IsError, Count: len(res.Content),
		Spills: conv.Spills, Structured: res.StructuredContent,
	}}
	if res.IsError {
		r.Details.Error = headline(conv.Text, 500)
		r.Text = fmt.Sprintf("tool %q on %q returned an error:\n%s", ref.Name, ref.Server, conv.Text)
	}
	if r.Text == "" {
		r.Text = fmt.Sprintf("tool %q on %q returned no content", ref.Name, ref.Server)
	}
	return r
}

// instructions returns a server's full instructions.
func (s *Session) instructions(ctx context.Context, server string) *Result {
	text, err := s.e.pool.Instructions(ctx, server)
	if err != nil {
		return s.errorResult(proxy.ActionInstructions, server, err)
	}
	r := &Result{Details: Details{Operation: string(proxy.ActionInstructions), Server: server, Count: 1}}
	if strings.TrimSpace(text) == "" {
		return s.bounded(r, "instructions", []string{fmt.Sprintf("%q gave no instructions", server)})
	}
	return s.bounded(r, "instructions", []string{fmt.Sprintf("instructions of %q:", server), bound.Untrusted(fmt.Sprintf("instructions of %q", server), text)})
}

// reconnect closes a server's connection and connects again.
func (s *Session) reconnect(ctx context.Context, server string) *Result {
	if err := s.e.pool.Reconnect(ctx, server); err != nil {
		return s.errorResult(proxy.ActionReconnect, server, err)
	}
	r := &Result{Details: Details{Operation: string(proxy.ActionReconnect), Server: server, Count: 1}}
	s.e.onChange(server)
	return s.bounded(r, "reconnect", []string{fmt.Sprintf("reconnected %q", server)})
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
