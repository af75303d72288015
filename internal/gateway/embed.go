package gateway

import (
	"context"
	"sync"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/embeddings"
)

// Semantic search: with settings.embeddings, each tool's text is embedded
// (package embeddings) when a server is indexed, or in the background for
// tools that lack a vector; a search embeds its query and the catalog fuses
// the nearest tools with the lexical ranking (catalog.QueryVector). Search
// never depends on the endpoint: when it fails, is slow, or the tools are
// still being embedded, the search is lexical and says why.

// embedder is the engine's embeddings client and its background filling.
type embedder struct {
	client *embeddings.Client

	mu      sync.Mutex
	filling chan struct{} // closed when the background embedding ends
}

// newEmbedder returns the embedder of conf, or nil when conf is nil.
func newEmbedder(conf *config.Embeddings, lookup config.Lookup) *embedder {
	if conf == nil {
		return nil
	}
	return &embedder{client: embeddings.New(conf, lookup)}
}

func (em *embedder) model() string { return em.client.Model() }

// embedTools embeds the given servers' tools that lack a vector.
func (e *Engine) embedTools(ctx context.Context, servers []string) (int, error) {
	return e.cat.EmbedTools(ctx, e.emb.client, servers)
}

// fillEmbeddings starts embedding every tool that lacks a vector, in the
// background, unless that is already under way. The engine's Close stops it.
func (e *Engine) fillEmbeddings() {
	em := e.emb
	em.mu.Lock()
	defer em.mu.Unlock()
	if em.filling != nil {
		return
	}
	done := make(chan struct{})
	started := e.bg.Go(func() {
		defer close(done)
		if _, err := e.embedTools(e.ctx, nil); err != nil && e.ctx.Err() == nil {
			e.log.Warn("computing embeddings", "err", err)
		}
		em.mu.Lock()
		em.filling = nil
		em.mu.Unlock()
	})
	if started {
		em.filling = done
	}
}

// semantic returns the query's vector for a hybrid search over servers, or
// nil and why the search is lexical ("" without settings.embeddings).
func (e *Engine) semantic(ctx context.Context, query string, servers []string) ([]float32, string) {
	if e.emb == nil {
		return nil, ""
	}
	vec, why, fill := e.cat.QueryVector(ctx, e.emb.client, query, servers)
	if fill {
		e.fillEmbeddings()
	}
	return vec, why
}
