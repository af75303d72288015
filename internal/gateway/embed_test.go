package gateway

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/embedtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// embedCanary is the API key of every test here: it must never show.
const embedCanary = "sk-canary-7c41e0-never-show"

// syncBuffer is a log sink that the engine's goroutines may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// hybridEngine returns an engine over the catalog fixture server with
// settings.embeddings pointing at baseURL, its key from $SB_EMBED_KEY (set
// to embedCanary), logging to log.
func hybridEngine(t *testing.T, baseURL string, log *syncBuffer) *Engine {
	t.Helper()
	t.Setenv("SB_EMBED_KEY", embedCanary)
	settings := map[string]any{"embeddings": map[string]any{"baseUrl": baseURL, "apiKey": "${SB_EMBED_KEY}", "model": "fake"}}
	opts := &Options{Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	e := engineIn(t, t.TempDir(), map[string]def{"tools": fixture(testserver.Catalog)}, settings, opts)
	e.emb.client.QueryTimeout = 300 * time.Millisecond // the bound is the point; kept short
	return e
}

// index indexes every server and returns the results.
func index(t *testing.T, e *Engine) []IndexResult {
	t.Helper()
	rs, err := e.Index(t.Context(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Error != "" {
			t.Fatalf("indexing %s: %s", r.Server, r.Error)
		}
	}
	return rs
}

func TestHybridSearch(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	srv := embedtest.Start(t)
	var log syncBuffer
	e := hybridEngine(t, srv.BaseURL, &log)
	rs := index(t, e)
	if r := rs[0]; r.Embedded != len(testserver.CatalogTools) || r.EmbeddingsError != "" {
		t.Fatalf("index: %d embedded, error %q; want %d, none", r.Embedded, r.EmbeddingsError, len(testserver.CatalogTools))
	}
	if again := index(t, e); again[0].Embedded != 0 {
		t.Errorf("indexing again embedded %d texts, want 0: none changed", again[0].Embedded)
	}
	for _, req := range srv.Requests() {
		if req.Authorization != "Bearer "+embedCanary || req.Model != "fake" {
			t.Errorf("request with Authorization %q, model %q; want the key and the model", req.Authorization, req.Model)
		}
	}

	// By meaning alone: no word of the query is in the tool's text.
	r := must(t, e, `{"search":"kerfuffle"}`)
	if info := r.Details.Search; info.Mode != "hybrid" || info.Reason != "" {
		t.Errorf("search info %+v, want hybrid without a reason", info)
	}
	wantText(t, r, "(hybrid: lexical + semantic)")
	if len(r.Details.Tools) == 0 || !strings.HasPrefix(r.Details.Tools[0].Name, "issue_") {
		t.Errorf("kerfuffle: got %v, want an issue tool first\n%s", names(r.Details.Tools), r.Text)
	}
	// Names still win, and paging and server filters work.
	for q, first := range map[string]string{"create issue": "issue_create", "github": "GitHubSearch", "resolve-library-id": "resolve-library-id", "c++": "compile_cpp", "文件搜索": "file_search"} {
		req, _ := json.Marshal(map[string]any{"search": q})
		r := must(t, e, string(req))
		if r.Details.Search.Mode != "hybrid" || len(r.Details.Tools) == 0 || r.Details.Tools[0].Name != first {
			t.Errorf("%q: mode %s, got %v, want %s first", q, r.Details.Search.Mode, names(r.Details.Tools), first)
		}
	}
	r = must(t, e, `{"search":"kerfuffle","server":"tools","limit":1,"offset":1}`)
	if r.Details.Count != 1 || r.Details.Total < 2 {
		t.Errorf("second page: %d of %d, want 1 of at least 2", r.Details.Count, r.Details.Total)
	}
	// Several needs are each searched hybrid, each with its own vector.
	r = must(t, e, `{"search":["kerfuffle","weather forecast"]}`)
	if tt := r.Details.Tools; r.Details.Search.Mode != "hybrid" || len(tt) < 2 || !strings.HasPrefix(tt[0].Name, "issue_") || tt[0].Need != "kerfuffle" ||
		tt[1].Name != "get_forecast" || tt[1].Need != "weather forecast" {
		t.Errorf("two needs: mode %s, got %+v, want hybrid with an issue tool, then get_forecast for need 2\n%s", r.Details.Search.Mode, tt, r.Text)
	}
	r = must(t, e, `{"search":"^get","regex":true}`)
	if r.Details.Search.Mode != "regex" {
		t.Errorf("regex search mode %q, want regex", r.Details.Search.Mode)
	}
	// A repeated query is not embedded again.
	n := len(srv.Requests())
	must(t, e, `{"search":"kerfuffle"}`)
	if got := len(srv.Requests()); got != n {
		t.Errorf("a repeated query sent %d requests, want 0", got-n)
	}
}

func TestSearchFallsBackToLexical(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	for _, tt := range []struct {
		name   string
		fail   func(r embedtest.Request) (int, string) // at search time, after indexing
		reason string
	}{
		{"server error", func(embedtest.Request) (int, string) {
			return http.StatusInternalServerError, `{"error":{"message":"model exploded"}}`
		}, "embeddings endpoint failed: POST http://127.0.0.1:"},
		{"echoes the key", func(r embedtest.Request) (int, string) {
			return http.StatusUnauthorized, "invalid key " + r.Authorization
		}, "401 Unauthorized: invalid key Bearer [redacted]"},
		{"bad answer", func(embedtest.Request) (int, string) {
			return http.StatusOK, `{"data":[]}`
		}, "the answer has 0 embeddings for 1 inputs"},
		{"slow", func(embedtest.Request) (int, string) { return embedtest.Hang, "" }, "no answer within 300ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := embedtest.Start(t)
			var log syncBuffer
			e := hybridEngine(t, srv.BaseURL, &log)
			index(t, e)
			srv.FailWith(tt.fail)
			r := must(t, e, `{"search":"create issue"}`)
			info := r.Details.Search
			if info.Mode != "lexical" || !strings.Contains(info.Reason, tt.reason) || !strings.HasSuffix(info.Reason, "; lexical only") {
				t.Errorf("search info %+v, want lexical with a reason holding %q", info, tt.reason)
			}
			wantText(t, r, "note: embeddings endpoint failed: ")
			if len(r.Details.Tools) == 0 || r.Details.Tools[0].Name != "issue_create" {
				t.Errorf("lexical fallback: got %v, want issue_create first", names(r.Details.Tools))
			}
			// The endpoint is left alone for a while: the next search does
			// not wait for it again, and says when it failed.
			n := len(srv.Requests())
			r = must(t, e, `{"search":"list issues"}`)
			if got := len(srv.Requests()); got != n {
				t.Errorf("a search right after a failure sent %d requests, want 0", got-n)
			}
			if !strings.Contains(r.Details.Search.Reason, "ago; next try in") {
				t.Errorf("reason right after a failure: %q, want when it failed", r.Details.Search.Reason)
			}
			for _, s := range []string{r.Text, string(r.JSON()), log.String()} {
				if strings.Contains(s, embedCanary) {
					t.Errorf("the API key shows:\n%s", s)
				}
			}
		})
	}
}

func TestSearchWhileEmbedding(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	srv := embedtest.Start(t)
	var log syncBuffer
	e := hybridEngine(t, srv.BaseURL, &log)

	// The first search indexes the server on demand but does not wait for
	// its embeddings: lexical, and why; they are computed in the background.
	r := must(t, e, `{"search":"create issue"}`)
	info := r.Details.Search
	if info.Mode != "lexical" || !strings.Contains(info.Reason, "embeddings are still being computed (9 of 9 tools have none yet)") {
		t.Errorf("first search: %+v, want lexical while embeddings are computed", info)
	}
	wantText(t, r, "note: embeddings are still being computed")
	e.emb.waitFill()
	r = must(t, e, `{"search":"kerfuffle"}`)
	if r.Details.Search.Mode != "hybrid" || len(r.Details.Tools) == 0 {
		t.Errorf("after the background embedding: %+v, %v; want hybrid results", r.Details.Search, names(r.Details.Tools))
	}

	// The endpoint embeds queries but fails on the tools' texts: the next
	// search says so, rather than that they are still being computed.
	srv.FailWith(func(r embedtest.Request) (int, string) {
		if len(r.Input) > 1 {
			return http.StatusBadRequest, `{"error":"input is too large to process"}`
		}
		return 0, ""
	})
	e2 := hybridEngine(t, srv.BaseURL, &log)
	r = must(t, e2, `{"search":"create issue"}`)
	if info := r.Details.Search; !strings.Contains(info.Reason, "still being computed") {
		t.Errorf("first search: %+v, want lexical while embeddings are computed", info)
	}
	e2.emb.waitFill()
	r = must(t, e2, `{"search":"create issue"}`)
	if info := r.Details.Search; info.Mode != "lexical" || !strings.Contains(info.Reason, "embeddings endpoint failed") || !strings.Contains(info.Reason, "400 Bad Request: input is too large to process") {
		t.Errorf("after a failed background embedding: %+v, want lexical with the failure", info)
	}
	if !strings.Contains(log.String(), "computing embeddings") {
		t.Errorf("the failed background embedding is not logged:\n%s", log.String())
	}
}

func TestEmbeddingsMisconfigured(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	// The key's variable is unset: search says so, and stays lexical.
	settings := map[string]any{"embeddings": map[string]any{"baseUrl": "http://127.0.0.1:1/v1", "apiKey": "${SB_UNSET_EMBED_KEY}"}}
	e := engineIn(t, t.TempDir(), map[string]def{"tools": fixture(testserver.Catalog)}, settings, nil)
	rs, err := e.Index(t.Context(), nil, nil)
	if err != nil || rs[0].Error != "" || !strings.Contains(rs[0].EmbeddingsError, "settings.embeddings.apiKey: environment variable SB_UNSET_EMBED_KEY is not set") {
		t.Errorf("index: %+v, %v; want indexed, with the embeddings error", rs, err)
	}
	r := must(t, e, `{"search":"create issue"}`)
	if info := r.Details.Search; info.Mode != "lexical" || !strings.Contains(info.Reason, "SB_UNSET_EMBED_KEY is not set") {
		t.Errorf("search info %+v, want lexical with the unset variable", info)
	}
	if len(r.Details.Tools) == 0 || r.Details.Tools[0].Name != "issue_create" {
		t.Errorf("got %v, want issue_create first", names(r.Details.Tools))
	}

	// Nothing listens: the endpoint is missing.
	t.Setenv("SB_EMBED_KEY", embedCanary)
	settings = map[string]any{"embeddings": map[string]any{"baseUrl": "http://127.0.0.1:1/v1", "apiKey": "${SB_EMBED_KEY}", "model": "m"}}
	e = engineIn(t, t.TempDir(), map[string]def{"tools": fixture(testserver.Catalog)}, settings, nil)
	rs, _ = e.Index(t.Context(), nil, nil)
	if want := "embedding tool texts: POST http://127.0.0.1:1/v1/embeddings: dial tcp 127.0.0.1:1: connect: connection refused"; rs[0].EmbeddingsError != want {
		t.Errorf("index with nothing listening: embeddings error %q, want %q", rs[0].EmbeddingsError, want)
	}
	r = must(t, e, `{"search":"create issue"}`)
	if info := r.Details.Search; info.Mode != "lexical" || !strings.Contains(info.Reason, "connection refused") {
		t.Errorf("search info %+v, want lexical with the refused connection", info)
	}
}

// TestEmbeddingsCanary checks that the API key reaches the endpoint and
// nothing else: no result, log, error or file.
func TestEmbeddingsCanary(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	srv := embedtest.Start(t)
	var log syncBuffer
	e := hybridEngine(t, srv.BaseURL, &log)
	var texts []string
	for _, r := range index(t, e) {
		b, _ := json.Marshal(r)
		texts = append(texts, string(b))
	}
	for _, req := range []string{`{}`, `{"search":"kerfuffle"}`, `{"describe":"issue_create"}`, `{"tool":"issue_create","args":{}}`} {
		r := handle(t, e, req)
		texts = append(texts, r.Text, string(r.JSON()))
	}
	srv.FailWith(func(r embedtest.Request) (int, string) {
		return http.StatusForbidden, `{"error":{"message":"key ` + r.Authorization + ` is not allowed"}}`
	})
	r := handle(t, e, `{"search":"something else entirely"}`)
	texts = append(texts, r.Text, string(r.JSON()), log.String(), e.Tool(t.Context()).Description)
	if !strings.Contains(r.Details.Search.Reason, "key Bearer [redacted] is not allowed") {
		t.Errorf("reason %q, want the endpoint's message, redacted", r.Details.Search.Reason)
	}
	for _, s := range texts {
		if strings.Contains(s, embedCanary) {
			t.Fatalf("the API key shows:\n%s", s)
		}
	}
	if n := len(srv.Requests()); n == 0 {
		t.Fatal("the endpoint got no request")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	filepath.Walk(filepath.Dir(e.opts.CatalogPath), func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if data, _ := os.ReadFile(path); bytes.Contains(data, []byte(embedCanary)) {
				t.Errorf("file %s holds the API key", path)
			}
		}
		return nil
	})
}

// waitFill waits for the background embedding to end, if one runs.
func (em *embedder) waitFill() {
	em.mu.Lock()
	ch := em.filling
	em.mu.Unlock()
	if ch != nil {
		<-ch
	}
}
