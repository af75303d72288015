// Package embeddings is the client of an OpenAI-compatible embeddings
// endpoint (POST {baseUrl}/embeddings, as served by OpenAI, Ollama,
// llama.cpp's server and vLLM), which settings.embeddings configures for
// hybrid search. It turns texts into vectors; the catalog decides what to
// embed and stores the vectors (it depends on this client through
// catalog.Embedder).
//
// The client is built so that search never depends on the endpoint: every
// request is bounded in time and size, a failure holds further requests
// back for a while, and no error holds a resolved value (the key, or a
// secret in the URL).
package embeddings

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
)

// Bounds of the client; the Client's fields of the same names start at
// these.
const (
	QueryTimeout = 2 * time.Second  // a search waits at most this for its query's vector
	BatchTimeout = 60 * time.Second // one batch of tool texts, while indexing
	RetryAfter   = 30 * time.Second // after a failure, the endpoint is left alone this long
	BatchSize    = 64               // tool texts per request
	MaxResponse  = 32 << 20         // bytes of one response
	queryCache   = 256              // query vectors kept
)

// Client is the client of settings.embeddings. Its methods are safe for
// concurrent use.
type Client struct {
	// The bounds, set by New; a test may shorten them before first use.
	QueryTimeout, BatchTimeout, RetryAfter time.Duration
	Batch                                  int // texts per request

	conf   *config.Embeddings         // as written: messages show references, never values
	res    *config.ResolvedEmbeddings // nil when resolving failed
	resErr error                      // why the settings cannot be used
	client *http.Client

	mu       sync.Mutex
	failure  error                // the endpoint's last failure
	failedAt time.Time            // when; no request is sent for RetryAfter after it
	queries  map[string][]float32 // recent query vectors, by query text
}

// New returns the client of conf, or nil when conf is nil. A conf whose
// references cannot be resolved makes a client whose Err says why.
func New(conf *config.Embeddings, lookup config.Lookup) *Client {
	if conf == nil {
		return nil
	}
	c := &Client{
		conf: conf, QueryTimeout: QueryTimeout, BatchTimeout: BatchTimeout,
		RetryAfter: RetryAfter, Batch: BatchSize, queries: map[string][]float32{},
	}
	c.res, c.resErr = conf.Resolve(lookup)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true // no idle connection outlives the engine
	c.client = &http.Client{
		Transport: tr,
		// A redirect could carry the key elsewhere: refuse it.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c
}

// Model names the model vectors are stored under.
func (c *Client) Model() string { return c.conf.Model }

// Err says why the settings cannot be used (a reference that does not
// resolve), or is nil.
func (c *Client) Err() error { return c.resErr }

// BatchSize is how many texts one Embed call should carry.
func (c *Client) BatchSize() int { return c.Batch }

// endpoint is the URL requests go to, as configured (references unresolved).
func (c *Client) endpoint() string { return strings.TrimRight(c.conf.BaseURL, "/") + "/embeddings" }

// Query returns the vector of a search query within QueryTimeout, from a
// cache of recent queries when it can.
func (c *Client) Query(ctx context.Context, q string) ([]float32, error) {
	c.mu.Lock()
	v, ok := c.queries[q]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	vs, err := c.embed(ctx, []string{q}, c.QueryTimeout)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.queries) >= queryCache {
		clear(c.queries)
	}
	c.queries[q] = vs[0]
	c.mu.Unlock()
	return vs[0], nil
}

// Embed returns the vectors of texts, in order, within BatchTimeout.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return c.embed(ctx, texts, c.BatchTimeout)
}

// Cooling returns the endpoint's last failure while requests are held
// back after it, with how long ago it was.
func (c *Client) Cooling() (error, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failure == nil {
		return nil, 0
	}
	ago := time.Since(c.failedAt)
	if ago >= c.RetryAfter {
		return nil, 0
	}
	return c.failure, ago
}

// embed returns the vectors of texts, in order, within timeout. A failure
// of the endpoint holds further requests back for RetryAfter; errors name
// the endpoint as configured and never hold a resolved value.
func (c *Client) embed(ctx context.Context, texts []string, timeout time.Duration) ([][]float32, error) {
	if c.resErr != nil {
		return nil, c.resErr
	}
	if err, ago := c.Cooling(); err != nil {
		return nil, fmt.Errorf("%w (%s ago; next try in %s)", err, ago.Round(time.Second), (c.RetryAfter - ago).Round(time.Second))
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vecs, err := c.post(rctx, texts)
	if err == nil {
		return vecs, nil
	}
	if ctx.Err() != nil { // the caller gave up: not the endpoint's failure
		return nil, ctx.Err()
	}
	if rctx.Err() != nil {
		err = fmt.Errorf("no answer within %s", timeout)
	}
	err = fmt.Errorf("POST %s: %s", c.endpoint(), c.res.Redact(err.Error()))
	c.mu.Lock()
	c.failure, c.failedAt = err, time.Now()
	c.mu.Unlock()
	return nil, err
}

// request is the body of POST /embeddings.
type request struct {
	Model          string   `json:"model,omitempty"` // llama.cpp's server serves one model and needs none
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

// response is the part of the answer that is read.
type response struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

func (c *Client) post(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(request{Model: c.conf.Model, Input: texts, EncodingFormat: "float"})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.res.BaseURL.Reveal()+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, errors.New("invalid baseUrl")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if key := c.res.APIKey.Reveal(); key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) { // its text repeats the resolved URL
			err = ue.Err
		}
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s%s", resp.Status, bodyHint(data))
	}
	if len(data) > MaxResponse {
		return nil, fmt.Errorf("the answer is larger than %d MiB", MaxResponse>>20)
	}
	return decode(data, len(texts))
}

// decode checks an answer: one finite, non-empty vector per input, all of
// one length, placed by index.
func decode(data []byte, n int) ([][]float32, error) {
	var r response
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

// bodyHint returns the start of an error answer's message, for the error:
// its first non-blank line, at most 200 characters.
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
	if msg = headline(msg, 200); msg == "" {
		return ""
	}
	return ": " + msg
}

// headline returns the first non-blank line of s, cut to n characters.
func headline(s string, n int) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		if r := []rune(line); len(r) > n {
			return strings.TrimSpace(string(r[:n-1])) + "…"
		}
		return line
	}
	return ""
}
