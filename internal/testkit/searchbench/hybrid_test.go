package searchbench

import (
	"context"
	"hash/fnv"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/testkit/embedtest"
)

// TestHybridDevReport runs the dev set through hybrid search with simulated
// embeddings, and reports it beside lexical search and the simulated
// semantic ranking alone. No real embedding model is reachable here: the
// fakes are lexical at heart (a hashed bag of words; hashed character
// trigrams), so this measures the fusion's machinery and how much a weak,
// partly redundant semantic ranking costs or brings, not what a real model
// brings. It asserts nothing.
func TestHybridDevReport(t *testing.T) {
	dir := filepath.Join("..", "..", "catalog", "testdata")
	tools := mustRead[Tool](t, filepath.Join(dir, "catalog.jsonl"))
	queries := mustRead[Query](t, filepath.Join(dir, "dev-queries.jsonl"))
	ctx := context.Background()
	c, err := catalog.Open(filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := Load(ctx, c, tools); err != nil {
		t.Fatal(err)
	}
	lexical := run(t, c, queries, nil, "")
	all, _ := Score(queries, lexical)
	t.Log(line("lexical", all))
	for _, m := range []struct {
		name string
		vec  func(string) []float32
	}{{"words", embedtest.Vector}, {"trigrams", trigrams}} {
		items, err := c.Unembedded(ctx, m.name, nil)
		if err != nil {
			t.Fatal(err)
		}
		vecs := make([][]float32, len(items))
		for i, it := range items {
			vecs[i] = m.vec(it.Text)
		}
		if err := c.PutEmbeddings(ctx, m.name, items, vecs); err != nil {
			t.Fatal(err)
		}
		alone, _ := Score(queries, nearestOnly(tools, queries, m.vec))
		t.Log(line(m.name+" only", alone))
		hybrid, _ := Score(queries, run(t, c, queries, m.vec, m.name))
		t.Log(line("hybrid "+m.name, hybrid))
	}
}

// run searches every query, hybrid when vec is set.
func run(t *testing.T, c *catalog.Catalog, queries []Query, vec func(string) []float32, model string) []Run {
	t.Helper()
	var runs []Run
	for _, q := range queries {
		opts := catalog.SearchOptions{Limit: 10}
		if vec != nil {
			opts.Embedding, opts.Model = vec(q.Query), model
		}
		res, err := c.Search(context.Background(), q.Query, opts)
		if err != nil {
			t.Fatal(err)
		}
		if vec != nil && !res.Hybrid {
			t.Fatalf("query %s: not hybrid", q.ID)
		}
		r := Run{ID: q.ID}
		for _, h := range res.Results {
			r.Results = append(r.Results, Ref{h.Server, h.Name})
		}
		runs = append(runs, r)
	}
	return runs
}

// nearestOnly ranks tools by the cosine of their server, name and
// description's vector with the query's.
func nearestOnly(tools []Tool, queries []Query, vec func(string) []float32) []Run {
	tv := make([][]float32, len(tools))
	for i, tl := range tools {
		tv[i] = vec(tl.Server + ": " + tl.Name + "\n" + tl.Description)
	}
	var runs []Run
	for _, q := range queries {
		qv := vec(q.Query)
		idx := make([]int, len(tools))
		sim := make([]float64, len(tools))
		for i := range tools {
			idx[i] = i
			for j := range qv {
				sim[i] += float64(qv[j] * tv[i][j])
			}
		}
		sort.SliceStable(idx, func(a, b int) bool { return sim[idx[a]] > sim[idx[b]] })
		r := Run{ID: q.ID}
		for _, i := range idx[:10] {
			r.Results = append(r.Results, Ref{tools[i].Server, tools[i].Name})
		}
		runs = append(runs, r)
	}
	return runs
}

// trigrams is a second fake model: hashed character trigrams of the
// lower-cased words, so that words sharing a stem are near.
func trigrams(text string) []float32 {
	const dims = 512
	v := make([]float32, dims)
	for _, w := range embedtest.Words(text) {
		w = "^" + strings.ToLower(w) + "$"
		rs := []rune(w)
		for i := 0; i+3 <= len(rs); i++ {
			h := fnv.New32a()
			h.Write([]byte(string(rs[i : i+3])))
			v[h.Sum32()%dims]++
		}
	}
	var sum float64
	for _, x := range v {
		sum += float64(x * x)
	}
	if sum == 0 {
		v[0] = 1
		return v
	}
	n := float32(math.Sqrt(sum))
	for i := range v {
		v[i] /= n
	}
	return v
}
