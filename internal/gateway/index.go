package gateway

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// cached returns the catalog's entry for a server's current definition.
func (e *Engine) cached(ctx context.Context, s *config.Server) (*catalog.Entry, bool) {
	hash := e.memo.hash(s)
	if ent, ok := e.memo.get(s.Name, hash); ok {
		return ent, true
	}
	ent, ok, err := e.cat.Get(ctx, s.Name, hash)
	if err != nil {
		e.log.Warn("reading the catalog", "server", s.Name, "err", err)
		return nil, false
	}
	if ok {
		e.memo.put(ent)
	}
	return ent, ok
}

// IndexResult reports the indexing of one server.
type IndexResult struct {
	Server    string        `json:"server"`
	Tools     int           `json:"tools"`
	Resources int           `json:"resources"`
	Templates int           `json:"templates"` // resource templates
	Prompts   int           `json:"prompts"`
	Duration  time.Duration `json:"durationNs"`
	Error     string        `json:"error,omitempty"`

	// With settings.embeddings: how many tool texts were embedded now
	// (texts embedded before are not counted), or why embedding failed.
	// A server whose embedding failed is indexed all the same; search
	// stays lexical until its tools have vectors.
	Embedded        int    `json:"embedded,omitempty"`
	EmbeddingsError string `json:"embeddingsError,omitempty"`

	err error // the server's error itself, class and all
}

// Failed reports whether the server or its embeddings failed.
func (r IndexResult) Failed() bool { return r.Error != "" || r.EmbeddingsError != "" }

// IndexOptions tune [Engine.Index]. The zero value works.
type IndexOptions struct {
	// Started, if set, is called as a server's indexing starts, and Done as
	// it ends; calls are never concurrent. Servers waiting for their turn
	// when ctx ends are reported to neither.
	Started func(server string)
	Done    func(IndexResult)
}

// Index connects to each named server (all usable ones when names is
// empty), lists everything it offers and stores it in the catalog, even
// when the catalog already has it, with at most Options.IndexConcurrency
// servers at once. With settings.embeddings it then embeds the texts of
// the server's tools that have no vector yet. A failing server does not
// stop the rest; an unknown or unusable name is an error before anything
// starts. The results are in the order of names.
func (e *Engine) Index(ctx context.Context, names []string, opts *IndexOptions) ([]IndexResult, error) {
	if opts == nil {
		opts = &IndexOptions{}
	}
	return e.index(ctx, names, opts, e.emb != nil)
}

func (e *Engine) index(ctx context.Context, names []string, opts *IndexOptions, embed bool) ([]IndexResult, error) {
	if len(names) == 0 {
		for _, s := range e.usable() {
			names = append(names, s.Name)
		}
	}
	servers := make([]*config.Server, 0, len(names))
	for _, n := range names {
		name, err := e.server(n)
		if err != nil {
			return nil, err
		}
		s, _ := e.cfg.Server(name)
		servers = append(servers, s)
	}
	results := make([]IndexResult, len(servers))
	sem := make(chan struct{}, e.opts.IndexConcurrency)
	var wg sync.WaitGroup
	var mu sync.Mutex // serializes the callbacks
	report := func(f func()) {
		mu.Lock()
		defer mu.Unlock()
		f()
	}
	for i, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				results[i] = IndexResult{Server: s.Name, Error: ctx.Err().Error()}
				return
			}
			if opts.Started != nil {
				report(func() { opts.Started(s.Name) })
			}
			results[i] = e.indexOne(ctx, s, embed)
			if opts.Done != nil {
				report(func() { opts.Done(results[i]) })
			}
		}()
	}
	wg.Wait()
	return results, ctx.Err()
}

// indexOne lists what one server offers and stores it, then embeds its
// tools' texts if embed is set.
func (e *Engine) indexOne(ctx context.Context, s *config.Server, embed bool) IndexResult {
	start := time.Now()
	ent, err := e.fetch(ctx, s.Name, true)
	r := IndexResult{Server: s.Name}
	if err == nil {
		err = e.put(ctx, ent)
	}
	if err != nil {
		r.Error, r.err = err.Error(), err
		r.Duration = time.Since(start)
		return r
	}
	r.Tools, r.Resources, r.Templates, r.Prompts = len(ent.Tools), len(ent.Resources), len(ent.ResourceTemplates), len(ent.Prompts)
	if embed {
		if r.Embedded, err = e.embedTools(ctx, []string{s.Name}); err != nil {
			r.EmbeddingsError = err.Error()
		}
	}
	r.Duration = time.Since(start)
	return r
}

// Prune removes from the catalog every server that is no longer configured
// or whose definition changed, and the embeddings no stored tool needs
// (all of them without settings.embeddings). It returns the names of the
// removed servers. A configuration that failed closed prunes nothing: it
// may have meant to keep every server.
func (e *Engine) Prune(ctx context.Context) ([]string, error) {
	if e.cfg.Err() != nil {
		return nil, nil
	}
	current := map[string]string{}
	for _, s := range e.cfg.Servers {
		if s.Err == nil {
			current[s.Name] = e.memo.hash(s)
		}
	}
	removed, err := e.cat.Prune(ctx, current)
	if err != nil {
		return nil, err
	}
	model := ""
	if e.emb != nil {
		model = e.emb.model()
	}
	if _, err := e.cat.PruneEmbeddings(ctx, model); err != nil {
		return removed, err
	}
	return removed, nil
}

// fetch lists everything a server offers. With connect it connects the
// server if needed. Resources, templates and prompts are optional
// capabilities: a server without them has none.
func (e *Engine) fetch(ctx context.Context, name string, connect bool) (*catalog.Entry, error) {
	s, _ := e.cfg.Server(name)
	if !connect {
		if !e.pool.Connected(ctx, name) {
			return nil, errNotConnected
		}
		// The connection may end before the listing: it must not start
		// the server again.
		ctx = upstream.OnlyConnected(ctx)
	}
	tools, err := e.pool.Tools(ctx, name)
	if errors.Is(err, upstream.ErrNotConnected) {
		return nil, errNotConnected
	}
	if err != nil {
		return nil, err
	}
	ent := &catalog.Entry{Server: name, Hash: e.memo.hash(s), Tools: tools, Keywords: s.SearchKeywords, FetchedAt: time.Now()}
	var errs []error
	if ent.Resources, err = e.pool.Resources(ctx, name); err != nil {
		errs = append(errs, err)
	}
	if ent.ResourceTemplates, err = e.pool.ResourceTemplates(ctx, name); err != nil {
		errs = append(errs, err)
	}
	if ent.Prompts, err = e.pool.Prompts(ctx, name); err != nil {
		errs = append(errs, err)
	}
	if ent.Instructions, err = e.pool.Instructions(ctx, name); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		if errors.Is(err, upstream.ErrNotConnected) {
			// The connection ended while it was listed: what it listed
			// is not a whole entry, and the next connection's refresh
			// lists it again.
			return nil, errNotConnected
		}
		// The tools are what search needs; keep them, and say what failed.
		e.log.Warn("listing a server", "server", name, "err", err)
		if ctx.Err() != nil {
			return nil, err
		}
	}
	return ent, nil
}

var errNotConnected = errors.New("not connected")

// refreshCatalog stores a connected server's current lists, after a
// list_changed notification or a new connection, and reports whether they
// differ from what the catalog had. It never connects.
func (e *Engine) refreshCatalog(name string) (changed bool) {
	s, ok := e.cfg.Server(name)
	if !ok {
		return false
	}
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	ent, err := e.fetch(ctx, name, false)
	if err != nil {
		if !errors.Is(err, errNotConnected) && e.ctx.Err() == nil {
			e.log.Warn("refreshing the catalog", "server", name, "err", err)
		}
		return false
	}
	old, had := e.cached(ctx, s)
	if had && sameListing(old, ent) {
		// Listed as the catalog has it, the usual case: only the time is
		// written, and the pins are judged with the definitions hashed for
		// the entry before. Stored in full when the catalog's entry is no
		// longer the one this process read.
		touched, err := e.cat.Touch(ctx, name, ent.Hash, old.FetchedAt, ent.FetchedAt)
		if touched {
			e.memo.put(ent)
			e.listedAgain(ctx, old, ent)
			return false
		}
		if err != nil && e.ctx.Err() == nil {
			e.log.Warn("refreshing the catalog", "server", name, "err", err)
		}
	}
	if err := e.put(ctx, ent); err != nil && e.ctx.Err() == nil {
		e.log.Warn("refreshing the catalog", "server", name, "err", err)
	}
	return !had || !sameLists(old, ent)
}

// ensureIndexed indexes the given servers that the catalog does not know
// at their current definition, in parallel and bounded. It returns the
// servers that could not be indexed, with why.
func (e *Engine) ensureIndexed(ctx context.Context, names []string) map[string]error {
	var missing []string
	for _, n := range names {
		s, _ := e.cfg.Server(n)
		if _, ok := e.cached(ctx, s); !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	// Embedding waits for the background (see Engine.semantic): a search
	// must not wait for the endpoint.
	results, _ := e.index(ctx, missing, &IndexOptions{}, false)
	failed := map[string]error{}
	for _, r := range results {
		switch {
		case r.err != nil:
			failed[r.Server] = r.err
		case r.Error != "": // ctx ended before its turn
			failed[r.Server] = errors.New(r.Error)
		}
	}
	return failed
}
