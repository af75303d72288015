package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// Semantic search: with settings.embeddings, each tool's text is embedded
// by an OpenAI-compatible endpoint (POST {baseUrl}/embeddings, as served by
// OpenAI, Ollama, llama.cpp's server and vLLM) when a server is indexed, or
// in the background for tools that lack a vector; a search embeds its query
// and the catalog fuses the nearest tools with the lexical ranking. Search
// never depends on the endpoint: when it is not configured correctly,
// fails, is slow, or the tools are still being embedded, the search is
// lexical and says why (SearchInfo.Reason).

// Bounds of the embeddings client.
const (
	embedQueryTimeout = 2 * time.Second  // a search waits at most this for its query's vector
	embedBatchTimeout = 60 * time.Second // one batch of tool texts, while indexing
	embedRetryAfter   = 30 * time.Second // after a failure, the endpoint is left alone this long
	embedBatchSize    = 64               // tool texts per request
	embedMaxResponse  = 32 << 20         // bytes of one response
	embedQueryCache   = 256              // query vectors kept
)

// embedder is the client of settings.embeddings and the state of semantic
// search. Its methods are safe for concurrent use.
type embedder struct {
	conf   *config.Embeddings         // as written: messages show references, never values
	res    *config.ResolvedEmbeddings // nil when resolving failed
	resErr error                      // why the settings cannot be used
	client *http.Client

	queryTimeout, batchTimeout, retryAfter time.Duration // embed* constants; tests shorten them
	batchSize                              int

	mu       sync.Mutex
	failure  error     // the endpoint's last failure
	failedAt time.Time // when; no request is sent for retryAfter after it
	filling  chan struct{}
	queries  map[string][]float32 // recent query vectors, by query text
}

// newEmbedder returns the client of conf, or nil when conf is nil. A conf
// whose references cannot be resolved makes an embedder that reports why.
func newEmbedder(conf *config.Embeddings, lookup config.Lookup) *embedder {
	if conf == nil {
		return nil
	}
	em := &embedder{
		conf: conf, queryTimeout: embedQueryTimeout, batchTimeout: embedBatchTimeout,
		retryAfter: embedRetryAfter, batchSize: embedBatchSize, queries: map[string][]float32{},
	}
	em.res, em.resErr = conf.Resolve(lookup)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true // no idle connection outlives the engine
	em.client = &http.Client{
		Transport: tr,
		// A redirect could carry the key elsewhere: refuse it.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return em
}

// model names the model vectors are stored under.
func (em *embedder) model() string { return em.conf.Model }

// endpoint is the URL requests go to, as configured (references unresolved).
func (em *embedder) endpoint() string { return strings.TrimRight(em.conf.BaseURL, "/") + "/embeddings" }

// query returns the vector of a search query, from the cache when it can.
func (em *embedder) query(ctx context.Context, q string) ([]float32, error) {
	em.mu.Lock()
	v, ok := em.queries[q]
	em.mu.Unlock()
	if ok {
		return v, nil
	}
	vs, err := em.embed(ctx, []string{q}, em.queryTimeout)
	if err != nil {
		return nil, err
	}
	em.mu.Lock()
	if len(em.queries) >= embedQueryCache {
		clear(em.queries)
	}
	em.queries[q] = vs[0]
	em.mu.Unlock()
	return vs[0], nil
}

// cooling returns the endpoint's last failure while requests are held
// back after it, with how long ago it was.
func (em *embedder) cooling() (error, time.Duration) {
	em.mu.Lock()
	defer em.mu.Unlock()
	if em.failure == nil {
		return nil, 0
	}
	ago := time.Since(em.failedAt)
	if ago >= em.retryAfter {
		return nil, 0
	}
	return em.failure, ago
}

// embed returns the vectors of texts, in order, within timeout. A failure
// of the endpoint holds further requests back for retryAfter; errors name
// the endpoint as configured and never hold a resolved value.
func (em *embedder) embed(ctx context.Context, texts []string, timeout time.Duration) ([][]float32, error) {
	if em.resErr != nil {
		return nil, em.resErr
	}
	if err, ago := em.cooling(); err != nil {
		return nil, fmt.Errorf("%w (%s ago; next try in %s)", err, ago.Round(time.Second), (em.retryAfter - ago).Round(time.Second))
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vecs, err := em.post(rctx, texts)
	if err == nil {
		return vecs, nil
	}
	if ctx.Err() != nil { // the caller gave up: not the endpoint's failure
		return nil, ctx.Err()
	}
	if rctx.Err() != nil {
		err = fmt.Errorf("no answer within %s", timeout)
	}
	err = fmt.Errorf("POST %s: %s", em.endpoint(), em.res.Redact(err.Error()))
	em.mu.Lock()
	em.failure, em.failedAt = err, time.Now()
	em.mu.Unlock()
	return nil, err
}

// embeddingsRequest is the body of POST /embeddings.
type embeddingsRequest struct {
	Model          string   `json:"model,omitempty"` // llama.cpp's server serves one model and needs none
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

// embeddingsResponse is the part of the answer that is read.
type embeddingsResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

func (em *embedder) post(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingsRequest{Model: em.conf.Model, Input: texts, EncodingFormat: "float"})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, em.res.BaseURL.Reveal()+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, errors.New("invalid baseUrl")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if key := em.res.APIKey.Reveal(); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := em.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // its text repeats the resolved URL
			err = ue.Err
		}
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, embedMaxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s%s", resp.Status, bodyHint(data))
	}
	if len(data) > embedMaxResponse {
		return nil, fmt.Errorf("the answer is larger than %d MiB", embedMaxResponse>>20)
	}
	return decodeEmbeddings(data, len(texts))
}

// decodeEmbeddings checks an answer: one finite, non-empty vector per
// input, all of one length, placed by index.
func decodeEmbeddings(data []byte, n int) ([][]float32, error) {
	var r embeddingsResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("the answer is not an embeddings response: %w", err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("the answer has %d embeddings for %d inputs", len(r.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		switch {
		case d.Index < 0 || d.Index >= n || out[d.Index] != nil:
			return nil, fmt.Errorf("the answer has a bad or repeated index %d", d.Index)
		case len(d.Embedding) == 0 || len(d.Embedding) != len(r.Data[0].Embedding):
			return nil, fmt.Errorf("the answer's embeddings have %d and %d dimensions", len(d.Embedding), len(r.Data[0].Embedding))
		}
		for _, x := range d.Embedding {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, errors.New("the answer has a value that is not finite")
			}
		}
		out[d.Index] = d.Embedding
	}
	return out, nil
}

// bodyHint returns the start of an error answer's message, for the error.
func bodyHint(data []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			msg = s
		}
	}
	if msg = proxy.Headline(msg, 200); msg == "" {
		return ""
	}
	return ": " + msg
}

// embedTools embeds the texts of the given servers' tools (all servers'
// when empty) that have no vector yet, in batches, and stores each batch
// as it comes. It returns how many texts it embedded.
func (e *Engine) embedTools(ctx context.Context, servers []string) (int, error) {
	em := e.emb
	items, err := e.cat.Unembedded(ctx, em.model(), servers)
	if err != nil {
		return 0, err
	}
	n := 0
	for len(items) > 0 {
		batch := items[:min(em.batchSize, len(items))]
		items = items[len(batch):]
		texts := make([]string, len(batch))
		for i, it := range batch {
			texts[i] = it.Text
		}
		vecs, err := em.embed(ctx, texts, em.batchTimeout)
		if err != nil {
			return n, fmt.Errorf("embedding tool texts: %w", err)
		}
		if err := e.cat.PutEmbeddings(ctx, em.model(), batch, vecs); err != nil {
			return n, err
		}
		n += len(batch)
	}
	return n, nil
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

// semantic decides how a search over servers runs: it returns the query's
// vector for a hybrid search, or nil and why the search is lexical ("" when
// embeddings are not configured). The query is embedded even while tools
// still lack vectors, so that the reason says whether the endpoint works.
func (e *Engine) semantic(ctx context.Context, query string, servers []string) ([]float32, string) {
	em := e.emb
	if em == nil {
		return nil, ""
	}
	if em.resErr != nil {
		return nil, fmt.Sprintf("settings.embeddings cannot be used: %v; lexical only", em.resErr)
	}
	missing, total, err := e.cat.EmbeddingCoverage(ctx, em.model(), servers)
	if err != nil {
		return nil, fmt.Sprintf("%v; lexical only", err)
	}
	if total == 0 {
		return nil, ""
	}
	vec, err := em.query(ctx, query)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Sprintf("%v; lexical only", ctx.Err())
	case err != nil:
		return nil, fmt.Sprintf("embeddings endpoint failed: %v; lexical only", err)
	case missing > 0:
		if err, ago := em.cooling(); err != nil { // embedding the tools failed
			return nil, fmt.Sprintf("embeddings endpoint failed %s ago: %v; lexical only", ago.Round(time.Second), err)
		}
		e.fillEmbeddings()
		return nil, fmt.Sprintf("embeddings are still being computed (%d of %d tools have none yet); lexical only", missing, total)
	}
	return vec, ""
}
