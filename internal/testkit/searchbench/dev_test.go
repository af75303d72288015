package searchbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// TestDevReport prints the dev-set figures per kind; with SEARCHBENCH_OUT it
// also writes the run file. It asserts nothing: see the catalog package's
// quality test for the floor.
func TestDevReport(t *testing.T) {
	dir := filepath.Join("..", "..", "catalog", "testdata")
	tools := mustRead[Tool](t, filepath.Join(dir, "catalog.jsonl"))
	queries := mustRead[Query](t, filepath.Join(dir, "dev-queries.jsonl"))
	runs, err := Evaluate(context.Background(), tools, queries, 10)
	if err != nil {
		t.Fatal(err)
	}
	all, byKind := Score(queries, runs)
	t.Log(line("all", all))
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Log(line(k, byKind[k]))
	}
	if out := os.Getenv("SEARCHBENCH_OUT"); out != "" {
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		enc := json.NewEncoder(f)
		enc.SetEscapeHTML(false)
		for _, r := range runs {
			enc.Encode(r)
		}
	}
}

func line(kind string, m Metrics) string {
	return fmt.Sprintf("%-10s n=%3d R@1 %5.1f R@5 %5.1f R@10 %5.1f nDCG@10 %5.1f MRR %5.1f", kind, m.Queries, m.R1, m.R5, m.R10, m.NDCG10, m.MRR)
}

func mustRead[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := ReadJSONL[T](f)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
