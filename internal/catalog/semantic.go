package catalog

import (
	"context"
	"fmt"
	"time"
)

// Embedder computes the vectors of texts for hybrid search: the client of
// an embeddings endpoint (package embeddings). The catalog decides what to
// embed and stores the vectors; an Embedder only talks to the endpoint.
type Embedder interface {
	// Model names the model vectors are stored under.
	Model() string
	// Err says why the embedder cannot be used at all (its settings), or
	// is nil.
	Err() error
	// BatchSize is how many texts one Embed call should carry.
	BatchSize() int
	// Embed returns the vectors of texts, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Query returns the vector of a search query, within the short bound
	// a search can wait.
	Query(ctx context.Context, q string) ([]float32, error)
	// Cooling returns the endpoint's last failure while requests are held
	// back after it, and how long ago it was; nil when requests may go.
	Cooling() (error, time.Duration)
}

// EmbedTools embeds the texts of the given servers' tools (all servers'
// when empty) that have no vector of em's model yet, in batches, and
// stores each batch as it comes. It returns how many texts it embedded.
func (c *Catalog) EmbedTools(ctx context.Context, em Embedder, servers []string) (int, error) {
	items, err := c.Unembedded(ctx, em.Model(), servers)
	if err != nil {
		return 0, err
	}
	n := 0
	for len(items) > 0 {
		batch := items[:min(max(em.BatchSize(), 1), len(items))]
		items = items[len(batch):]
		texts := make([]string, len(batch))
		for i, it := range batch {
			texts[i] = it.Text
		}
		vecs, err := em.Embed(ctx, texts)
		if err != nil {
			return n, fmt.Errorf("embedding tool texts: %w", err)
		}
		if err := c.PutEmbeddings(ctx, em.Model(), batch, vecs); err != nil {
			return n, err
		}
		n += len(batch)
	}
	return n, nil
}

// QueryVector decides how a search over servers runs: it returns the
// query's vector for a hybrid search, or nil and why the search is lexical
// ("" when there is nothing to embed against). The query is embedded even
// while tools still lack vectors, so that the reason says whether the
// endpoint works. fill reports that tools lack vectors while the endpoint
// works: the caller should embed them (EmbedTools) in the background.
func (c *Catalog) QueryVector(ctx context.Context, em Embedder, query string, servers []string) (vec []float32, why string, fill bool) {
	if err := em.Err(); err != nil {
		return nil, fmt.Sprintf("settings.embeddings cannot be used: %v; lexical only", err), false
	}
	missing, total, err := c.EmbeddingCoverage(ctx, em.Model(), servers)
	if err != nil {
		return nil, fmt.Sprintf("%v; lexical only", err), false
	}
	if total == 0 {
		return nil, "", false
	}
	vec, err = em.Query(ctx, query)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Sprintf("%v; lexical only", ctx.Err()), false
	case err != nil:
		return nil, fmt.Sprintf("embeddings endpoint failed: %v; lexical only", err), false
	case missing > 0:
		if err, ago := em.Cooling(); err != nil { // embedding the tools failed
			return nil, fmt.Sprintf("embeddings endpoint failed %s ago: %v; lexical only", ago.Round(time.Second), err), false
		}
		return nil, fmt.Sprintf("embeddings are still being computed (%d of %d tools have none yet); lexical only", missing, total), true
	}
	return vec, "", false
}
