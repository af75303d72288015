package searchbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// benchSet is one query set over one catalog.
type benchSet struct {
	name     string
	catalogs []string // JSONL catalogs, loaded together
	queries  string

	scale int  // with copies of the catalog's servers up to this many tools (see Scale)
	short bool // the queries made short (see ShortQueries)
}

// scaleTools is the size of the scale sets' catalog: that of
// BenchmarkScaleSearch's 10k.
const scaleTools = 10_000

// sharedDir holds the team's shared development data (dev-tasks.jsonl is
// kept there, outside the repository, beside it); SEARCHBENCH_SHARED
// overrides it.
func sharedDir() string {
	if d := os.Getenv("SEARCHBENCH_SHARED"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "..", "shared", "bench", "search")
}

func benchSets() []benchSet {
	dev := filepath.Join("..", "..", "catalog", "testdata")
	people := filepath.Join("..", "..", "..", "testdata", "search")
	return []benchSet{
		{name: "dev-queries", catalogs: []string{filepath.Join(dev, "catalog.jsonl")}, queries: filepath.Join(dev, "dev-queries.jsonl")},
		{name: "dev-tasks", catalogs: []string{filepath.Join(dev, "catalog.jsonl")}, queries: filepath.Join(sharedDir(), "dev-tasks.jsonl")},
		{name: "people", catalogs: []string{filepath.Join(people, "catalog.jsonl")}, queries: filepath.Join(people, "people.jsonl")},
		// The same queries with the three servers among 527 others.
		{name: "people+527", catalogs: []string{filepath.Join(people, "catalog.jsonl"), filepath.Join(dev, "catalog.jsonl")}, queries: filepath.Join(people, "people.jsonl")},
		// At 10,000 tools: the real catalog and copies of its servers, the
		// copies of a relevant tool relevant too. Short queries are made
		// from dev-queries (see ShortQueries).
		{name: "short@10k", catalogs: []string{filepath.Join(dev, "catalog.jsonl")}, queries: filepath.Join(dev, "dev-queries.jsonl"), scale: scaleTools, short: true},
		{name: "dev-tasks@10k", catalogs: []string{filepath.Join(dev, "catalog.jsonl")}, queries: filepath.Join(sharedDir(), "dev-tasks.jsonl"), scale: scaleTools},
	}
}

// TestSetsReport scores every query set (dev-queries, dev-tasks when the
// shared data is here, and the people set of testdata/search) and prints
// nDCG@10 per set and kind. With SEARCHBENCH_SAVE=dir it writes each set's
// run to dir/<set>.jsonl; with SEARCHBENCH_BASE=dir it pairs each set with
// the run saved there (an earlier version's) and prints the paired
// difference with its bootstrap 95% interval. It asserts nothing: the
// floors are in the catalog package's quality tests.
func TestSetsReport(t *testing.T) {
	for _, s := range benchSets() {
		if _, err := os.Stat(s.queries); err != nil {
			t.Logf("%s: skipped: %v", s.name, err)
			continue
		}
		var tools []Tool
		for _, c := range s.catalogs {
			tools = append(tools, mustRead[Tool](t, c)...)
		}
		queries := mustRead[Query](t, s.queries)
		if s.short {
			queries = ShortQueries(queries, "paraphrase", "keyword", "task", "name")
		}
		var copies map[Ref][]Ref
		if s.scale > 0 {
			tools, copies = Scale(tools, s.scale)
			queries = WithCopies(queries, copies)
		}
		runs, err := Evaluate(context.Background(), tools, queries, 10)
		if err != nil {
			t.Fatal(err)
		}
		all, byKind := Score(queries, runs)
		t.Log(line(s.name, all))
		if copies != nil {
			t.Logf("  %d tools; results in the top 10 that are a copy of one above: %.2f a query", len(tools), Crowding(runs, copies))
		}
		for _, k := range sortedKeys(byKind) {
			t.Log(line("  "+k, byKind[k]))
		}
		if dir := os.Getenv("SEARCHBENCH_SAVE"); dir != "" {
			writeRuns(t, filepath.Join(dir, s.name+".jsonl"), runs)
		}
		if dir := os.Getenv("SEARCHBENCH_BASE"); dir != "" {
			base := mustRead[Run](t, filepath.Join(dir, s.name+".jsonl"))
			p := Compare(PerQuery(queries, base), PerQuery(queries, runs))
			t.Log(pairedLine(s.name, p))
		}
	}
}

func pairedLine(name string, p Paired) string {
	return fmt.Sprintf("%-10s paired n=%d nDCG@10 %.1f -> %.1f, diff %+.1f [95%% CI %+.1f, %+.1f], %d better, %d worse",
		name, p.Queries, p.Before, p.After, p.Diff, p.Lo, p.Hi, p.Better, p.Worse)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func writeRuns(t *testing.T, path string, runs []Run) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for _, r := range runs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
}
