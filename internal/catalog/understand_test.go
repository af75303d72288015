package catalog_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
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

// TestActionPolarity: a query that asks to keep something ranks the tools
// that delete it below every tool that creates or adds (issue 35), and for
// "remember that Alice works at Acme" out of the top six.
func TestActionPolarity(t *testing.T) {
	for _, tc := range []struct {
		query    string
		noDelete bool // no delete tool in the top 6 at all
	}{
		{"remember that Alice works at Acme", true},
		{"how do I save a note about a person so I remember it later", false},
	} {
		got := topNames(t, peerTools(t), 6, tc.query)[0]
		lastCreate, firstDelete := -1, len(got)
		for i, name := range got {
			if strings.HasPrefix(name, "memory/create_") || strings.HasPrefix(name, "memory/add_") {
				lastCreate = i
			}
			if strings.HasPrefix(name, "memory/delete_") {
				firstDelete = min(firstDelete, i)
				if tc.noDelete {
					t.Errorf("%q: %s at %d in the top 6 %v; want no delete tool", tc.query, name, i+1, got)
				}
			}
		}
		if lastCreate < 0 || firstDelete < lastCreate {
			t.Errorf("%q: top 6 %v; want create/add tools, all above any delete tool", tc.query, got)
		}
	}
}

// TestServerPurpose: the newcomer's sentence finds the memory server's
// create_entities or add_observations first, and both in the top 2 (issue
// 35): the sentence never says "entity", "observation" or "graph".
func TestServerPurpose(t *testing.T) {
	got := topNames(t, peerTools(t), 3, "how do I save a note about a person so I remember it later")[0]
	want := map[string]bool{"memory/create_entities": true, "memory/add_observations": true}
	if len(got) < 2 || !want[got[0]] || !want[got[1]] {
		t.Errorf("top 3 = %v; want memory/create_entities and memory/add_observations first", got)
	}
}

// TestCopyThatWorks: with two copies of the everything server, one that
// cannot run (ev2, which sorts first and would win a tie), "add two
// numbers" lists get-sum first, on the copy that works, naming the other
// (issue 35).
func TestCopyThatWorks(t *testing.T) {
	tools := peerTools(t)
	for _, tl := range tools {
		if tl.Server == "everything" {
			tl.Server = "ev2"
			tools = append(tools, tl)
		}
	}
	ctx := context.Background()
	c, err := catalog.Open(filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := searchbench.Load(ctx, c, tools); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		broken     map[string]bool
		wantServer string
		wantAlso   string
	}{
		{map[string]bool{"ev2": true}, "everything", "ev2"},
		{map[string]bool{"everything": true}, "ev2", "everything"},
	} {
		res, err := c.Search(ctx, "add two numbers", catalog.SearchOptions{Broken: tc.broken})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Results) == 0 {
			t.Fatal("no results")
		}
		r := res.Results[0]
		if r.Name != "get-sum" || r.Server != tc.wantServer || !slices.Equal(r.Also, []string{tc.wantAlso}) {
			t.Errorf("broken %v: first result %s/%s also on %v; want %s/get-sum also on [%s]", tc.broken, r.Server, r.Name, r.Also, tc.wantServer, tc.wantAlso)
		}
	}
}

// TestExplain: with Explain, each result says which fields matched and
// which understanding step moved it; without, nothing.
func TestExplain(t *testing.T) {
	ctx := context.Background()
	c, err := catalog.Open(filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := searchbench.Load(ctx, c, peerTools(t)); err != nil {
		t.Fatal(err)
	}
	why := func(query, server, name string, explain bool) []string {
		t.Helper()
		res, err := c.Search(ctx, query, catalog.SearchOptions{Limit: 50, Explain: explain})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Results {
			if r.Server == server && r.Name == name {
				return r.Why
			}
		}
		t.Fatalf("%q: %s/%s not found", query, server, name)
		return nil
	}
	for _, tc := range []struct {
		query, server, name string
		want                []string
	}{
		{"remember that Alice works at Acme", "memory", "create_entities", []string{"action named (create)"}},
		{"create entity", "memory", "create_entities", []string{"action matches (create)"}},
		{"remember that Alice works at Acme", "memory", "delete_entities", []string{"action contradicts (create vs delete)"}},
		{"how do I save a note about a person so I remember it later", "memory", "add_observations", []string{`"observat"… (a related word) in name`, `"memory"… (a related word) in server`}},
		{"read_graph", "memory", "read_graph", []string{"name: the query is the tool's name"}},
	} {
		got := why(tc.query, tc.server, tc.name, true)
		for _, w := range tc.want {
			if !slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, w) }) {
				t.Errorf("%q, %s: why %q; want a line starting %q", tc.query, tc.name, got, w)
			}
		}
		if got := why(tc.query, tc.server, tc.name, false); got != nil {
			t.Errorf("%q, %s without Explain: why %q; want none", tc.query, tc.name, got)
		}
	}
}
