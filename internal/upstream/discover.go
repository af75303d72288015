package upstream

import (
	"context"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Discovery bounds (DESIGN.md, Bounds).
const (
	maxPages    = 100
	maxTools    = 10000
	maxItems    = 5000 // resources, templates or prompts
	maxToolName = 128
)

// A listKind is one of the lists a server offers.
type listKind int

const (
	kindTools listKind = iota
	kindResources
	kindTemplates
	kindPrompts
	numKinds
)

var kindNames = [numKinds]string{"tools", "resources", "resource templates", "prompts"}

// cachedList is the last list of a kind fetched from a server.
type cachedList struct {
	gen   uint64 // the session it came from
	items any    // []*mcp.Tool, []*mcp.Resource, …
	len   int
	ok    bool
}

// refreshState coalesces list_changed refreshes of one kind.
type refreshState struct {
	running bool
	again   bool
}

// list returns the server's list of a kind from the cache if it came from
// sess, else fetches it (all pages, within the bounds) and caches it.
// Callers that need the same list of the same connection meanwhile share one
// fetch: at connect, the catalog refresh and the operation that connected
// both ask for every list.
func list[T any](ctx context.Context, s *server, sess *session, kind listKind) ([]T, error) {
	items, err := s.shareFetch(ctx, listKey{kind, sess.gen}, func(ctx context.Context) (any, error) {
		items, err := s.fetch(ctx, sess, kind)
		if err == nil {
			s.store(sess, kind, items)
		}
		return items, err
	})
	if err != nil {
		return nil, err
	}
	return items.([]T), nil
}

// A listKey names one list of one connection.
type listKey struct {
	kind listKind
	gen  uint64
}

// A listCall is one fetch of a list, shared by every caller that needs the
// list while it runs.
type listCall struct {
	done  chan struct{} // closed when items or err is set
	items any
	err   error
	// abandoned reports that the fetch failed because the context of the
	// caller that ran it ended: the others, still waiting, fetch again.
	abandoned bool
}

// shareFetch returns the cached list of key's connection, or runs fetch,
// or waits for the run of the same key under way. A fetch runs under the
// context of the caller that started it, so that cancelling a lone caller
// still cancels its requests; if that caller leaves (cancelled, timed out),
// its fetch fails and a caller still waiting starts it again.
func (s *server) shareFetch(ctx context.Context, key listKey, fetch func(context.Context) (any, error)) (any, error) {
	for {
		s.mu.Lock()
		if c := s.lists[key.kind]; c.ok && c.gen == key.gen {
			s.mu.Unlock()
			return c.items, nil
		}
		if call, ok := s.fetching[key]; ok {
			s.mu.Unlock()
			select {
			case <-call.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if call.abandoned && ctx.Err() == nil {
				continue
			}
			return call.items, call.err
		}
		call := &listCall{done: make(chan struct{})}
		if s.fetching == nil {
			s.fetching = map[listKey]*listCall{}
		}
		s.fetching[key] = call
		s.mu.Unlock()

		items, err := fetch(ctx)
		s.mu.Lock()
		delete(s.fetching, key)
		call.items, call.err, call.abandoned = items, err, err != nil && ctx.Err() != nil
		s.mu.Unlock()
		close(call.done)
		return items, err
	}
}

// fetch lists all items of a kind.
func (s *server) fetch(ctx context.Context, sess *session, kind listKind) (any, error) {
	cs := sess.cs
	switch kind {
	case kindTools:
		tools, err := paginate(ctx, kind, maxTools, func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
			r, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Tools, r.NextCursor, nil
		})
		return s.filterTools(tools), err
	case kindResources:
		return paginate(ctx, kind, maxItems, func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
			r, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Resources, r.NextCursor, nil
		})
	case kindTemplates:
		return paginate(ctx, kind, maxItems, func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
			r, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.ResourceTemplates, r.NextCursor, nil
		})
	default:
		return paginate(ctx, kind, maxItems, func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
			r, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Prompts, r.NextCursor, nil
		})
	}
}

// paginate fetches every page, within the discovery bounds: a repeated
// cursor, more than maxPages pages or more than limit items is an error
// naming the bound.
func paginate[T any](ctx context.Context, kind listKind, limit int, page func(context.Context, string) ([]T, string, error)) ([]T, error) {
	var all []T
	seen := make(map[string]bool)
	cursor := ""
	for n := 1; ; n++ {
		if n > maxPages {
			return nil, boundError("more than %d pages of %s", maxPages, kindNames[kind])
		}
		items, next, err := page(ctx, cursor)
		if err != nil {
			return nil, err
		}
		all = append(all, items...)
		if len(all) > limit {
			return nil, boundError("more than %d %s", limit, kindNames[kind])
		}
		if next == "" {
			return all, nil
		}
		if seen[next] {
			return nil, boundError("the server repeated the pagination cursor %q", truncate(next, 40))
		}
		seen[next] = true
		cursor = next
	}
}

func boundError(format string, args ...any) error {
	return withClass(ClassBound, fmt.Errorf("%w: "+format, append([]any{ErrBound}, args...)...))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// filterTools drops tools whose names are unsafe (with a warning) and tools
// that includeTools/excludeTools exclude.
func (s *server) filterTools(tools []*mcp.Tool) []*mcp.Tool {
	out := tools[:0:0]
	for _, t := range tools {
		if t == nil {
			continue
		}
		if err := checkToolName(t.Name); err != nil {
			s.log.Warn("skipping tool", "tool", truncate(fmt.Sprintf("%q", t.Name), 80), "reason", err)
			continue
		}
		if s.cfg.ToolAllowed(t.Name) {
			out = append(out, t)
		}
	}
	return s.rewriteTools(out)
}

var (
	errEmptyName   = errors.New("empty name")
	errLongName    = fmt.Errorf("name longer than %d bytes", maxToolName)
	errControlName = errors.New("name holds control characters or invalid UTF-8")
)

// checkToolName rejects names that are empty, too long, or could break a
// display or a prompt.
func checkToolName(name string) error {
	switch {
	case name == "":
		return errEmptyName
	case len(name) > maxToolName:
		return errLongName
	case !utf8.ValidString(name):
		return errControlName
	}
	for _, r := range name {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return errControlName
		}
	}
	return nil
}

// store caches a fetched list, unless a newer session's list is there.
func (s *server) store(sess *session, kind listKind, items any) {
	n := lenOf(items)
	s.mu.Lock()
	c := s.lists[kind]
	if c.ok && c.gen > sess.gen {
		s.mu.Unlock()
		return
	}
	s.lists[kind] = cachedList{gen: sess.gen, items: items, len: n, ok: true}
	s.mu.Unlock()
	s.pool.notify(s.cfg.Name)
}

func lenOf(items any) int {
	switch v := items.(type) {
	case []*mcp.Tool:
		return len(v)
	case []*mcp.Resource:
		return len(v)
	case []*mcp.ResourceTemplate:
		return len(v)
	case []*mcp.Prompt:
		return len(v)
	}
	return 0
}

// listChanged refreshes a list the server says has changed, in the
// background. Refreshes of one kind are coalesced; a failed refresh keeps the
// previous list. Lists never fetched are left for the next request.
func (s *server) listChanged(kind listKind) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.lists[kind].ok {
		return
	}
	r := &s.refresh[kind]
	if r.running {
		r.again = true
		return
	}
	r.running = s.pool.goOwned(func() { s.refreshLoop(kind) })
}

func (s *server) refreshLoop(kind listKind) {
	for {
		s.refreshOnce(kind)
		s.mu.Lock()
		r := &s.refresh[kind]
		again := r.again
		r.again, r.running = false, again
		s.mu.Unlock()
		if !again {
			return
		}
	}
}

func (s *server) refreshOnce(kind listKind) {
	s.mu.Lock()
	sess := s.sess
	if sess != nil {
		s.inflight++
	}
	s.mu.Unlock()
	if sess == nil {
		return
	}
	defer s.release(sess)
	ctx, cancel := withTimeout(s.pool.ctx, s.timeout)
	defer cancel()
	items, err := s.fetch(ctx, sess, kind)
	if err != nil {
		err = opError(ctx, s.cfg.Name, "refreshing "+kindNames[kind], s.timeout, sess.scrub.error(err), ClassServer)
		s.log.Warn("refresh failed; keeping the previous list", "error", err)
		return
	}
	s.store(sess, kind, items)
}
