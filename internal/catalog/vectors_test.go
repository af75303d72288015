package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/embedtest"
)

// embedAll stores the fake model's vectors for every tool lacking one and
// returns how many texts it embedded.
func embedAll(t testing.TB, c *Catalog, model string) int {
	t.Helper()
	items, err := c.Unembedded(context.Background(), model, nil)
	if err != nil {
		t.Fatal(err)
	}
	vecs := make([][]float32, len(items))
	for i, it := range items {
		vecs[i] = embedtest.Vector(it.Text)
	}
	if err := c.PutEmbeddings(context.Background(), model, items, vecs); err != nil {
		t.Fatal(err)
	}
	return len(items)
}

func TestEmbedText(t *testing.T) {
	d := toolDoc{Server: "github", Name: "issue_create", Title: "Create issue", Description: "  Open a new issue.\n", Params: "repo  owner/name body issue text "}
	got := string(appendEmbedText(nil, &d))
	want := "github: issue create (issue_create)\nCreate issue\nOpen a new issue.\nparameters: repo owner/name body issue text"
	if got != want {
		t.Errorf("embed text:\n got %q\nwant %q", got, want)
	}
	long := toolDoc{Server: "s", Name: "n", Description: strings.Repeat("é", maxEmbedText)}
	b := appendEmbedText([]byte("prefix"), &long)
	if n := len(b) - len("prefix"); n > maxEmbedText || !strings.HasPrefix(string(b), "prefix") || !isValidUTF8(b) {
		t.Errorf("a long text: %d bytes after the prefix (want at most %d), valid UTF-8 %v", n, maxEmbedText, isValidUTF8(b))
	}
}

func isValidUTF8(b []byte) bool { return strings.ToValidUTF8(string(b), "\uFFFD") == string(b) }

func TestEmbeddingsRefreshWithText(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c := searchFixture(t, b)
		missing, total, err := c.EmbeddingCoverage(ctx, "m", nil)
		if err != nil || missing != total || total != 13 {
			t.Fatalf("coverage before embedding: %d missing of %d (%v), want 13 of 13", missing, total, err)
		}
		if n := embedAll(t, c, "m"); n != 13 {
			t.Errorf("embedded %d texts, want 13", n)
		}
		if missing, total, _ := c.EmbeddingCoverage(ctx, "m", nil); missing != 0 || total != 13 {
			t.Errorf("coverage after embedding: %d missing of %d, want 0 of 13", missing, total)
		}
		if missing, total, _ := c.EmbeddingCoverage(ctx, "m", []string{"github", "weather"}); missing != 0 || total != 6 {
			t.Errorf("coverage of two servers: %d missing of %d, want 0 of 6", missing, total)
		}
		if n := embedAll(t, c, "m"); n != 0 {
			t.Errorf("embedding again embedded %d texts, want 0", n)
		}

		// A changed description needs a new vector; nothing else does.
		if err := c.Put(ctx, &Entry{Server: "weather", Hash: "1", Tools: []*mcp.Tool{
			{Name: "get_forecast", Description: "Get the weather forecast for a city, hour by hour.", InputSchema: map[string]any{"type": "object"}},
		}}); err != nil {
			t.Fatal(err)
		}
		items, err := c.Unembedded(ctx, "m", nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range items {
			got = append(got, it.Server+"/"+it.Name)
		}
		if diff := cmp.Diff([]string{"weather/get_forecast"}, got); diff != "" {
			t.Errorf("unembedded after a description changed (-want +got):\n%s", diff)
		}
		if missing, _, _ := c.EmbeddingCoverage(ctx, "m", nil); missing != 1 {
			t.Errorf("coverage after a description changed: %d missing, want 1", missing)
		}
		// Another model has none.
		if missing, total, _ := c.EmbeddingCoverage(ctx, "other", nil); missing != total {
			t.Errorf("coverage for another model: %d missing of %d, want all", missing, total)
		}

		embedAll(t, c, "m")
		n, err := c.PruneEmbeddings(ctx, "m")
		if err != nil || n != 1 {
			t.Errorf("PruneEmbeddings removed %d (%v), want the 1 of the old description", n, err)
		}
		if n, _ := c.PruneEmbeddings(ctx, ""); n != 13 {
			t.Errorf("PruneEmbeddings without a model removed %d, want 13", n)
		}
	})
}

func TestPutEmbeddingsErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c := searchFixture(t, b)
		items, err := c.Unembedded(ctx, "m", []string{"weather"})
		if err != nil || len(items) != 1 {
			t.Fatalf("Unembedded(weather) = %d items, %v; want 1", len(items), err)
		}
		for _, tt := range []struct {
			name string
			vecs [][]float32
			want string
		}{
			{"too few", nil, "0 vectors for 1 texts"},
			{"empty", [][]float32{{}}, "0 dimensions"},
			{"zero", [][]float32{{0, 0}}, "zero or not finite"},
			{"nan", [][]float32{{float32(nan()), 1}}, "zero or not finite"},
		} {
			err := c.PutEmbeddings(ctx, "m", items, tt.vecs)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: got %v, want an error containing %q", tt.name, err, tt.want)
			}
		}
	})
}

func nan() float64 { var z float64; return z / z }

func TestHybridSearch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c := searchFixture(t, b)
		embedAll(t, c, "m")
		hybrid := func(q string, opts SearchOptions) Results {
			t.Helper()
			opts.Embedding, opts.Model = embedtest.Vector(q), "m"
			res, err := c.Search(ctx, q, opts)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}

		// A query without a word in common with the tool finds it by meaning.
		res := hybrid("kerfuffle", SearchOptions{})
		if !res.Hybrid || len(res.Results) == 0 {
			t.Fatalf("kerfuffle: hybrid %v, %d results; want hybrid results", res.Hybrid, len(res.Results))
		}
		if top := res.Results[0]; top.Server != "github" || !strings.HasPrefix(top.Name, "issue_") || top.Match != MatchSemantic {
			t.Errorf("kerfuffle: first %s/%s (%s), want a github issue tool found by meaning", top.Server, top.Name, top.Match)
		}
		if lex, _ := c.Search(ctx, "kerfuffle", SearchOptions{}); lex.Total != 0 || lex.Hybrid {
			t.Errorf("kerfuffle, lexical: %d results, hybrid %v; want none, lexical", lex.Total, lex.Hybrid)
		}

		// Exact and prefix name matches still come first.
		for _, tt := range []struct {
			q     string
			first ref
			match Match
		}{
			{"issue_create", ref{"github", "issue_create"}, MatchExact},
			{"github", ref{"github", "GitHubSearch"}, MatchPrefix},
			{"resolve-library-id", ref{"context7", "resolve-library-id"}, MatchExact},
			{"create issue", ref{"github", "issue_create"}, MatchText},
			{"c++", ref{"lang", "compile_cpp"}, MatchText},
			{"文件搜索", ref{"files", "file_search"}, MatchText},
		} {
			res := hybrid(tt.q, SearchOptions{})
			if len(res.Results) == 0 {
				t.Errorf("%q: no results", tt.q)
				continue
			}
			if got := (ref{res.Results[0].Server, res.Results[0].Name}); got != tt.first || res.Results[0].Match != tt.match {
				t.Errorf("%q: first %v (%s), want %v (%s)", tt.q, got, res.Results[0].Match, tt.first, tt.match)
			}
		}

		// Server filter, paging and determinism hold in hybrid mode too.
		res = hybrid("search files", SearchOptions{Servers: []string{"files"}, Limit: 50})
		for _, r := range res.Results {
			if r.Server != "files" {
				t.Errorf("server filter: got %s/%s", r.Server, r.Name)
			}
		}
		all := hybrid("read a file", SearchOptions{Limit: 50})
		var paged []Result
		for off := 0; off < all.Total; off += 2 {
			p := hybrid("read a file", SearchOptions{Limit: 2, Offset: off})
			if p.Total != all.Total {
				t.Fatalf("page at %d: total %d, want %d", off, p.Total, all.Total)
			}
			paged = append(paged, p.Results...)
		}
		if diff := cmp.Diff(all.Results, paged); diff != "" {
			t.Errorf("pages differ from one search (-all +pages):\n%s", diff)
		}

		// A query vector of other dimensions cannot be compared: lexical.
		res, err := c.Search(ctx, "create issue", SearchOptions{Embedding: []float32{1, 0, 0}, Model: "m"})
		lex, _ := c.Search(ctx, "create issue", SearchOptions{})
		if err != nil || res.Hybrid {
			t.Errorf("mismatched dimensions: hybrid %v, err %v; want lexical", res.Hybrid, err)
		}
		if diff := cmp.Diff(lex, res); diff != "" {
			t.Errorf("mismatched dimensions: results differ from lexical (-lexical +got):\n%s", diff)
		}
		// So is one of a model with no vectors stored.
		if res, _ := c.Search(ctx, "create issue", SearchOptions{Embedding: embedtest.Vector("x"), Model: "other"}); res.Hybrid {
			t.Error("a model without vectors: hybrid, want lexical")
		}
	})
}

// TestHybridSeesOtherWriters checks that vectors written through another
// handle (another process) reach this one's searches.
func TestHybridSeesOtherWriters(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c, _ := b.openTemp(t)
		fillFixture(t, c)
		other := b.reopen(t, c)
		if missing, _, _ := c.EmbeddingCoverage(ctx, "m", nil); missing == 0 {
			t.Fatal("coverage before embedding: none missing")
		}
		embedAll(t, other, "m")
		if missing, _, _ := c.EmbeddingCoverage(ctx, "m", nil); missing != 0 {
			t.Errorf("coverage after another handle embedded: %d missing, want 0", missing)
		}
	})
}

func TestMigrateFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	// Version 1 is the current schema without the tables added since.
	var v1 []string
	for _, s := range schema {
		if s != embeddingsTable && s != failuresTable && s != pinsTable {
			v1 = append(v1, s)
		}
	}
	for _, s := range v1 {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{
		`INSERT INTO servers VALUES ('kept', 'h', '', '{}', 0)`,
		`INSERT INTO tools (server, seq, name, title, description, params) VALUES ('kept', 0, 'echo', '', 'Echoes text.', '')`,
		`PRAGMA user_version = 1`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	c, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ent, ok, err := c.Get(context.Background(), "kept", "h")
	if err != nil || !ok || len(ent.Tools) != 1 {
		t.Fatalf("after migrating: Get = %v, %v, %v; want the stored entry", ent, ok, err)
	}
	var v int
	c.db.QueryRow("PRAGMA user_version").Scan(&v)
	if v != schemaVersion {
		t.Errorf("schema version %d after migrating, want %d", v, schemaVersion)
	}
	if n := embedAll(t, c, "m"); n != 1 {
		t.Errorf("embedded %d texts after migrating, want 1", n)
	}
}

// benchDims is the vector length of the hybrid benchmark: nomic-embed-text's.
const benchDims = 768

// benchVector is a deterministic pseudo-random unit vector for text: the
// benchmark measures speed, not ranking.
func benchVector(text string) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	r := rand.New(rand.NewPCG(h.Sum64(), 1))
	v := make([]float32, benchDims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// BenchmarkHybrid measures hybrid search over the generated catalogs of
// BenchmarkSearch, with 768-dimensional vectors: storing them, loading
// them into memory, and searching (which includes the lexical half).
func BenchmarkHybrid(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			l := loadBench(b, n)
			ctx := context.Background()
			items, err := l.c.Unembedded(ctx, "bench", nil)
			if err != nil {
				b.Fatal(err)
			}
			vecs := make([][]float32, len(items))
			for i, it := range items {
				vecs[i] = benchVector(it.Text)
			}
			start := time.Now()
			for i := 0; i < len(items); i += 64 {
				j := min(i+64, len(items))
				if err := l.c.PutEmbeddings(ctx, "bench", items[i:j], vecs[i:j]); err != nil {
					b.Fatal(err)
				}
			}
			put := time.Since(start)
			vecs = nil
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start = time.Now()
			if _, _, err := l.c.EmbeddingCoverage(ctx, "bench", nil); err != nil {
				b.Fatal(err)
			}
			load := time.Since(start)
			runtime.GC()
			runtime.ReadMemStats(&after)
			queries := make([][]float32, len(benchQueries))
			for i, q := range benchQueries {
				queries[i] = benchVector(q)
			}
			var lat []time.Duration
			for i := 0; b.Loop(); i++ {
				k := i % len(benchQueries)
				start := time.Now()
				res, err := l.c.Search(ctx, benchQueries[k], SearchOptions{Embedding: queries[k], Model: "bench"})
				if err != nil || !res.Hybrid {
					b.Fatalf("hybrid %v, %v", res.Hybrid, err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
			b.ReportMetric(ms(lat[len(lat)/2]), "ms-median")
			b.ReportMetric(ms(lat[min(len(lat)-1, len(lat)*99/100)]), "ms-p99")
			b.ReportMetric(put.Seconds(), "s-put-vectors")
			b.ReportMetric(ms(load), "ms-load-vectors")
			b.ReportMetric(float64(after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc))/(1<<20), "MB-heap-vectors")
		})
	}
}

// TestSearchCurrentDefinitionsOnly checks that with Hashes a search, of
// every kind, finds only tools of entries stored for the hashes given, and
// names the servers it skipped.
func TestSearchCurrentDefinitionsOnly(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c := searchFixture(t, b) // every entry has hash "1"
		embedAll(t, c, "m")
		hashes := map[string]string{"github": "2", "files": "1", "gone": "1"}
		for _, tt := range []struct {
			name  string
			query string
			opts  SearchOptions
		}{
			{"lexical", "issue file search", SearchOptions{}},
			{"regex", "issue|file", SearchOptions{Regex: true}},
			{"hybrid", "issue file search", SearchOptions{Embedding: embedtest.Vector("issue file search"), Model: "m"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				opts := tt.opts
				opts.Hashes, opts.Limit = hashes, 100
				res, err := c.Search(ctx, tt.query, opts)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Results) == 0 {
					t.Fatal("found nothing")
				}
				for _, r := range res.Results {
					if r.Server != "files" {
						t.Errorf("found %s/%s; want only files' tools", r.Server, r.Name)
					}
				}
				if want := []string{"github", "gone"}; !cmp.Equal(res.Skipped, want) {
					t.Errorf("skipped %v, want %v", res.Skipped, want)
				}

				// With a server filter too, only the filtered servers count.
				opts.Servers = []string{"github", "lang"}
				res, err = c.Search(ctx, tt.query, opts)
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Results) != 0 || !cmp.Equal(res.Skipped, []string{"github"}) {
					t.Errorf("servers github and lang: %v, skipped %v; want nothing, github skipped", refs(res.Results), res.Skipped)
				}
			})
		}
		// An empty Hashes searches nothing.
		res, err := c.Search(ctx, "issue", SearchOptions{Hashes: map[string]string{}})
		if err != nil || len(res.Results) != 0 || res.Total != 0 {
			t.Errorf("empty hashes: %v (%d), %v; want nothing", refs(res.Results), res.Total, err)
		}
	})
}
