package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// serverTools connects a server and lists its tools.
func (s *Session) serverTools(ctx context.Context, server string) *proxy.Result {
	ent, err := s.e.entry(ctx, server)
	if err != nil {
		return proxy.ErrorResult(proxy.ActionServer, server, err)
	}
	tools, pol := s.e.listing(ctx, ent)
	return proxy.ToolsWithPolicy(server, s.allowedTools(server, tools), ent.Instructions, pol)
}

// entry returns a server's catalog entry, connecting and indexing it first
// when the catalog does not know its current definition, or when the
// entry is not of the server's live connection: not connected, or
// connected and not yet listed into the catalog (unless it may not be
// started offline). What it returns is what the server offers now, which
// pinning judges.
func (e *Engine) entry(ctx context.Context, server string) (*catalog.Entry, error) {
	s, _ := e.cfg.Server(server)
	if ent, ok := e.cached(ctx, s); ok {
		if s.Offline != "" {
			return ent, nil
		}
		if live, listed := e.pool.ListedTools(server); listed && sameSlice(ent.Tools, live) {
			return ent, nil
		}
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
//
// With includeDisabled it also searches what the catalog kept of disabled
// servers, never starting them, and marks their tools.
func (s *Session) search(ctx context.Context, req *proxy.Request) *proxy.Result {
	var servers, off, unknown []string
	if req.Server == "" || !s.e.isDisabled(req.Server) {
		servers = s.allowedServers(s.e.searchable(req.Server))
	}
	if req.IncludeDisabled {
		off, _, unknown = s.e.disabledEntries(ctx, req.Server)
		off = s.allowedServers(off)
	}
	nOff := 0
	if !req.IncludeDisabled && req.Server == "" {
		nOff = len(s.e.disabled(""))
	}
	failed := s.e.ensureIndexed(ctx, servers)
	if err := failed[req.Server]; req.Server != "" && err != nil {
		return proxy.ErrorResult(proxy.ActionSearch, req.Server, err)
	}
	servers = append(servers, off...)
	opts := catalog.SearchOptions{Servers: servers, Hashes: s.e.hashes(servers), Limit: req.Limit, Offset: req.Offset, Regex: req.Regex,
		Exclude: s.excludeDenied(ctx, servers, s.e.unsearchable(ctx, servers)), Broken: s.e.broken(ctx, servers, failed), Explain: req.Explain}
	needs := req.Needs()
	found := &proxy.Searched{Query: req.Query, Server: req.Server, Offset: req.Offset, Limit: req.Limit, Regex: req.Regex, Servers: servers,
		Disabled: off, Unknown: unknown, Off: nOff, Shapes: req.IncludeSchemas}
	if len(needs) > 1 {
		found.Queries = needs
	}
	if current := proxy.Answered(servers, failed); !req.Regex && len(current) > 0 {
		// With nothing to search there is no query to embed. One vector
		// per need; a need without one makes the search lexical.
		for _, q := range needs {
			vec, why := s.e.semantic(ctx, q, current)
			if vec == nil {
				opts.Embeddings, found.Reason = nil, why
				break
			}
			opts.Embeddings, opts.Model = append(opts.Embeddings, vec), s.e.emb.model()
		}
	}
	if len(servers) == 0 {
		return proxy.Search(found, s.e.opts.Audience) // nothing to search: the catalog would take none as all
	}
	res, err := s.e.cat.SearchAll(ctx, needs, opts)
	if err != nil {
		return proxy.ErrorResult(proxy.ActionSearch, req.Server, err)
	}
	found.Hybrid, found.Total = res.Hybrid, res.Total
	if opts.Embeddings != nil && !res.Hybrid {
		found.Reason = "the stored embeddings do not fit the query's (another model answered?); lexical only (hint: switchboard index)"
	}
	for _, name := range res.Skipped {
		if failed[name] == nil { // indexed, then overwritten by another process
			if failed == nil {
				failed = map[string]error{}
			}
			failed[name] = fmt.Errorf("the catalog has no entry for its current definition (hint: switchboard index %s)", name)
		}
	}
	found.Failed = serverErrors(failed)
	for _, h := range res.Results {
		also := slices.DeleteFunc(slices.Clone(h.Also), func(server string) bool { return s.allowed(server, h.Name) != nil })
		ti := proxy.ToolInfo{Server: h.Server, Name: h.Name, Title: h.Title, Description: h.Description, Score: h.Score, Implied: h.Implied, Also: also,
			Disabled: slices.Contains(off, h.Server), Why: h.Why}
		if len(also) > 0 {
			ti.CannotRun = cannotRun(opts.Broken, append([]string{h.Server}, also...))
		}
		if len(needs) > 1 {
			ti.Need = needs[h.Need]
		}
		found.Hits = append(found.Hits, ti)
	}
	if req.IncludeSchemas {
		found.Schemas = s.e.inputSchemas(ctx, found.Hits)
	}
	return proxy.Search(found, s.e.opts.Audience)
}

// inputSchemas returns the input schemas of tools, from the catalog.
func (e *Engine) inputSchemas(ctx context.Context, tools []proxy.ToolInfo) map[proxy.ToolRef]any {
	out := map[proxy.ToolRef]any{}
	for _, t := range tools {
		def, ok := e.cfg.Server(t.Server)
		if !ok {
			continue
		}
		if ent, ok := e.cached(ctx, def); ok {
			for _, tool := range ent.Tools {
				if tool.Name == t.Name {
					out[proxy.ToolRef{Server: t.Server, Name: t.Name}] = tool.InputSchema
				}
			}
		}
	}
	return out
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
		// A name prefixed with a server's (server_tool) says where to look:
		// that server alone is indexed first, and the others only if the
		// name is not found there.
		rest := servers
		if named := prefixServers(name, servers); server == "" && len(named) > 0 {
			failed = e.ensureIndexed(ctx, named)
			names, tools = lookup()
			ref, err = names.Resolve(name, server)
			rest = slices.DeleteFunc(slices.Clone(servers), func(s string) bool { return slices.Contains(named, s) })
		}
		if err != nil && len(rest) > 0 {
			more := e.ensureIndexed(ctx, rest)
			if failed == nil {
				failed = more
			} else {
				maps.Copy(failed, more)
			}
			names, tools = lookup()
			ref, err = names.Resolve(name, server)
		}
	}
	if err != nil {
		return proxy.ToolRef{}, nil, e.unresolved(ctx, name, server, err, names, servers, failed)
	}
	for _, t := range tools[ref.Server] {
		if t.Name == ref.Name {
			return ref, t, nil
		}
	}
	return ref, nil, nil
}

// prefixServers returns the servers whose name, as a prefix (server_…, or
// mcp__server__…), begins name, as proxy.Names matches prefixed names.
func prefixServers(name string, servers []string) []string {
	norm := proxy.Normalize(name)
	var out []string
	if server, _, ok := config.SplitToolPattern(norm); ok {
		for _, s := range servers {
			if proxy.Normalize(s) == server {
				out = append(out, s)
			}
		}
	}
	for _, s := range servers {
		if rest, ok := strings.CutPrefix(norm, proxy.Normalize(s)+"_"); ok && rest != "" {
			out = append(out, s)
		}
	}
	return out
}

// unresolved says why a tool name was not found, truthfully: with server
// given and that server unreachable, its own error (a failed start, an
// unset variable, a timeout, a refused authorization such as needs-auth
// and the command that logs in); the same when the name is prefixed with
// an unreachable server's (server_tool), or when the only server searched
// is unreachable: its tools are not unknown, they could not be listed.
// Otherwise, which servers could not be searched and why; for a name
// prefixed with a server of an ignored project file, that the project is
// not trusted; for a tool of a disabled server, that it is disabled and
// how to enable it.
func (e *Engine) unresolved(ctx context.Context, name, server string, err error, names *proxy.Names, servers []string, failed map[string]error) error {
	if ferr := failed[server]; server != "" && ferr != nil {
		return ferr
	}
	if server != "" || !errors.Is(err, proxy.ErrUnknownTool) {
		return err
	}
	if why := e.untrustedPrefix(name); why != nil {
		return why
	}
	if why := e.disabledTool(ctx, name); why != nil {
		return why
	}
	if len(failed) == 0 {
		return err
	}
	for _, s := range prefixServers(name, servers) {
		if ferr := failed[s]; ferr != nil {
			return ferr
		}
	}
	if len(servers) == 1 && failed[servers[0]] != nil {
		return failed[servers[0]]
	}
	return &proxy.UnreachedError{Name: name, Answered: proxy.Answered(servers, failed), Failed: serverErrors(failed), Suggestions: names.Suggest(name, "", 5)}
}

// describe shows one tool in full, from the catalog when it can.
func (s *Session) describe(ctx context.Context, req *proxy.Request) *proxy.Result {
	ref, t, err := s.e.resolve(ctx, req.Name, req.Server)
	if err == nil {
		err = s.allowed(ref.Server, ref.Name)
	}
	if err != nil {
		return proxy.ErrorResult(proxy.ActionDescribe, req.Server, err)
	}
	if t == nil {
		return proxy.ErrorResult(proxy.ActionDescribe, ref.Server, fmt.Errorf("tool %q on %q is not in the catalog: this is a bug", ref.Name, ref.Server))
	}
	if q := s.e.quarantined(ctx, ref.Server)[ref.Name]; q != nil {
		// What the server offers now is shown only as untrusted data.
		return proxy.DescribeQuarantined(ref, q.Approved(), quarantineNote(q), req.IncludeSchemas, s.e.opts.Audience)
	}
	return proxy.Describe(ref, t, req.IncludeSchemas, s.e.opts.Audience)
}

// call calls a tool exactly once.
func (s *Session) call(ctx context.Context, req *proxy.Request) *proxy.Result {
	ref, res, err := s.callNamed(ctx, req.Name, req.Server, req.Args)
	if err != nil {
		server := req.Server
		if ref.Server != "" {
			server = ref.Server
		}
		return proxy.ErrorResult(proxy.ActionCall, server, err)
	}
	conv, err := s.e.spill.Convert("call-"+ref.Name, res.Content, res.StructuredContent)
	if err != nil {
		return proxy.ErrorResult(proxy.ActionCall, ref.Server, err)
	}
	return proxy.Call(ref, res, conv)
}

// callNamed calls a tool named as an agent names it, exactly once: the
// one call path of the mcp tool's call and of a script's tools.call. ref
// is set once the name is resolved.
func (s *Session) callNamed(ctx context.Context, name, server string, args map[string]any) (proxy.ToolRef, *mcp.CallToolResult, error) {
	ref, t, err := s.e.resolve(ctx, name, server)
	if err != nil {
		return proxy.ToolRef{}, nil, err
	}
	if err := s.allowed(ref.Server, ref.Name); err != nil {
		return proxy.ToolRef{}, nil, err
	}
	params := &mcp.CallToolParams{Name: ref.Name, Arguments: args}
	if args != nil {
		// Encoded once, here: the audit record, the approval form and the
		// call itself each take the bytes as they are (the keys sorted, as
		// encoding the map gives them).
		if b, err := json.Marshal(args); err == nil {
			params.Arguments = encodedArgs(b)
		}
	}
	tok, stop := s.e.progress.start(ctx)
	defer stop()
	if tok != nil {
		params.SetProgressToken(tok)
	}
	res, err := s.send(ctx, ref, t, params)
	return ref, res, err
}

// instructions returns a server's full instructions.
func (s *Session) instructions(ctx context.Context, server string) *proxy.Result {
	text, err := s.e.pool.Instructions(ctx, server)
	if err != nil {
		return proxy.ErrorResult(proxy.ActionInstructions, server, err)
	}
	return proxy.Instructions(server, text)
}

// reconnect closes a server's connection and connects again.
func (s *Session) reconnect(ctx context.Context, server string) *proxy.Result {
	if err := s.e.pool.Reconnect(ctx, server); err != nil {
		return proxy.ErrorResult(proxy.ActionReconnect, server, err)
	}
	s.e.onChange(server)
	return proxy.Reconnected(server)
}
