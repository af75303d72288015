package catalog_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/searchbench"
)

// peerTools are the tools of the three npm peers the tests pin (everything,
// filesystem, memory), as they list them (see testdata/search/README.md).
func peerTools(t *testing.T) []searchbench.Tool {
	return readJSONL[searchbench.Tool](t, filepath.Join("..", "..", "testdata", "search", "catalog.jsonl"))
}

// topNames runs queries over tools and returns each one's top n as
// server/name.
func topNames(t *testing.T, tools []searchbench.Tool, n int, queries ...string) [][]string {
	t.Helper()
	var qs []searchbench.Query
	for i, q := range queries {
		qs = append(qs, searchbench.Query{ID: string(rune('a' + i)), Query: q})
	}
	runs, err := searchbench.Evaluate(context.Background(), tools, qs, n)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]string, len(runs))
	for i, r := range runs {
		for _, x := range r.Results {
			out[i] = append(out[i], x.Server+"/"+x.Name)
		}
	}
	return out
}

// TestActionPolarity: a query that asks to keep something does not get the
// tools that delete it among its top results (issue 35).
func TestActionPolarity(t *testing.T) {
	for _, q := range []string{"remember that Alice works at Acme", "how do I save a note about a person so I remember it later"} {
		got := topNames(t, peerTools(t), 6, q)[0]
		firstCreate := -1
		for i, name := range got {
			if strings.HasPrefix(name, "memory/create_") || strings.HasPrefix(name, "memory/add_") {
				if firstCreate < 0 {
					firstCreate = i
				}
			}
			if strings.HasPrefix(name, "memory/delete_") {
				t.Errorf("%q: %s at %d in the top 6 %v; want no delete tool", q, name, i+1, got)
			}
		}
		if firstCreate < 0 {
			t.Errorf("%q: no create/add tool in the top 6 %v", q, got)
		}
	}
}
