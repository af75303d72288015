package catalog

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// searchFixture is a small catalog with the shapes that matter to ranking.
func searchFixture(t testing.TB, b backend) *Catalog {
	t.Helper()
	c, _ := b.openTemp(t)
	return fillFixture(t, c)
}

// catalogOf opens a temporary catalog that holds entries.
func catalogOf(t *testing.T, entries ...*Entry) *Catalog {
	t.Helper()
	c, _ := openTemp(t)
	for _, e := range entries {
		if err := c.Put(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// wantFirst fails t unless each query (cases: query, then the tool's name)
// lists that tool first.
func wantFirst(t *testing.T, c *Catalog, cases [][2]string) {
	t.Helper()
	for _, tc := range cases {
		res, err := c.Search(context.Background(), tc[0], SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Results) == 0 || res.Results[0].Name != tc[1] {
			t.Errorf("Search(%q) = %v, want %s first", tc[0], refs(res.Results), tc[1])
		}
	}
}

func fillFixture(t testing.TB, c *Catalog) *Catalog {
	t.Helper()
	schema := func(props ...string) map[string]any {
		p := map[string]any{}
		for i := 0; i+1 < len(props); i += 2 {
			p[props[i]] = map[string]any{"type": "string", "description": props[i+1]}
		}
		return map[string]any{"type": "object", "properties": p}
	}
	entries := []*Entry{
		{Server: "github", Hash: "1", Tools: []*mcp.Tool{
			{Name: "issue_create", Description: "Open a new issue in a repository.", InputSchema: schema("repo", "owner/name", "body", "issue text")},
			{Name: "issue_list", Description: "List the issues of a repository."},
			{Name: "GitHubSearch", Description: "Search GitHub for code, issues and users."},
			{Name: "search", Description: "Search repositories by keyword."},
			{Name: "searchCode", Description: "Find code by text."},
		}, Keywords: map[string][]string{"issue_*": {"bug"}, "issue_create": {"ticket"}}},
		{Server: "context7", Hash: "1", Tools: []*mcp.Tool{
			{Name: "resolve-library-id", Description: "Resolves a package name to a Context7 library ID."},
			{Name: "get-library-docs", Description: "Fetches up-to-date documentation for a library.", InputSchema: schema("topic", "topic to focus on")},
		}},
		{Server: "lang", Hash: "1", Tools: []*mcp.Tool{
			{Name: "compile_cpp", Description: "Compile C++ sources with clang."},
			{Name: "run_python", Description: "Run a Python script."},
		}},
		{Server: "files", Hash: "1", Tools: []*mcp.Tool{
			{Name: "read_file", Description: "Read the complete contents of a file."},
			{Name: "file_search", Title: "文件搜索", Description: "按名称搜索文件，返回匹配的路径列表"},
			{Name: "write_file", Description: "Create or overwrite a file."},
		}},
		{Server: "weather", Hash: "1", Tools: []*mcp.Tool{
			{Name: "get_forecast", Description: "Get the weather forecast for a city.", InputSchema: schema("city", "city name")},
		}},
	}
	for _, e := range entries {
		if err := c.Put(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

type ref struct{ Server, Name string }

func refs(rs []Result) []ref {
	out := make([]ref, len(rs))
	for i, r := range rs {
		out[i] = ref{r.Server, r.Name}
	}
	return out
}

func TestSearchRanking(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := searchFixture(t, b)
		tests := []struct {
			query string
			first ref   // the expected top result
			match Match // its match kind
		}{
			{"create issue", ref{"github", "issue_create"}, MatchText},
			{"issue_create", ref{"github", "issue_create"}, MatchExact},
			{"IssueCreate", ref{"github", "issue_create"}, MatchExact},
			{"github", ref{"github", "GitHubSearch"}, MatchPrefix},
			{"GitHubSearch", ref{"github", "GitHubSearch"}, MatchExact},
			{"github.search", ref{"github", "search"}, MatchExact},
			{"github/search", ref{"github", "search"}, MatchExact},
			{"resolve-library-id", ref{"context7", "resolve-library-id"}, MatchExact},
			{"resolve_library_id", ref{"context7", "resolve-library-id"}, MatchExact},
			{"resolveLibraryId", ref{"context7", "resolve-library-id"}, MatchExact},
			{"c++", ref{"lang", "compile_cpp"}, MatchText},
			{"文件搜索", ref{"files", "file_search"}, MatchText},
			{"搜索文件", ref{"files", "file_search"}, MatchText},
			{"readFile", ref{"files", "read_file"}, MatchExact},
			{"read fil", ref{"files", "read_file"}, MatchPrefix},              // a partial name
			{"contents fil", ref{"files", "read_file"}, MatchText},            // a partial word
			{"documentation", ref{"context7", "get-library-docs"}, MatchText}, // stemmed
			{"ticket", ref{"github", "issue_create"}, MatchText},              // searchKeywords
			{"rain tomorrow", ref{"weather", "get_forecast"}, MatchText},      // related words
			{"topic", ref{"context7", "get-library-docs"}, MatchText},         // parameter names
			{"search", ref{"github", "search"}, MatchExact},
			{"sear", ref{"github", "search"}, MatchPrefix},
			{"context7", ref{"context7", "resolve-library-id"}, MatchPrefix}, // server name
			{"bug", ref{"github", "issue_create"}, MatchText},                // keywords by glob
		}
		for _, tt := range tests {
			t.Run(tt.query, func(t *testing.T) {
				res, err := c.Search(context.Background(), tt.query, SearchOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Results) == 0 {
					t.Fatalf("Search(%q) found nothing; want %v first", tt.query, tt.first)
				}
				got := res.Results[0]
				if (ref{got.Server, got.Name}) != tt.first || got.Match != tt.match {
					t.Errorf("Search(%q) first = %s/%s (%s); want %v (%s)\nall: %v", tt.query, got.Server, got.Name, got.Match, tt.first, tt.match, refs(res.Results))
				}
			})
		}
	})
}

func TestSearchExactThenPrefix(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := searchFixture(t, b)
		res, err := c.Search(context.Background(), "search", SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var kinds []Match
		for _, r := range res.Results {
			kinds = append(kinds, r.Match)
		}
		want := []Match{MatchExact, MatchPrefix}
		if len(kinds) < 2 || kinds[0] != want[0] || kinds[1] != want[1] {
			t.Fatalf("matches = %v; want exact, then prefix first", kinds)
		}
		for i := 1; i < len(kinds); i++ {
			if matchTier[kinds[i]] > matchTier[kinds[i-1]] {
				t.Errorf("result %d (%s) ranks below a weaker match (%s)", i, kinds[i], kinds[i-1])
			}
		}
	})
}

// TestQuerySyntax checks that no query errors because of its syntax.
func TestQuerySyntax(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := searchFixture(t, b)
		queries := []string{
			"", " ", "\t\n", `"quoted phrase"`, `"`, `'`, "c++", "C#", ".net", "resolve-library-id",
			"gh.search", "a AND b OR NOT c", "-x +y", "foo*", "*", "?", "(", ")", "[", "]", "{}", `\`,
			"name:search", "issue_create()", "%", "_", "__", "..", "/", "😀 emoji", "文件搜索", "ファイル検索",
			"파일 검색", "\x00", "\xff\xfe", "SELECT * FROM tools; --", "' OR 1=1 --", strings.Repeat("a", 10000),
			strings.Repeat("search ", 500),
		}
		for _, q := range queries {
			name := q
			if len(name) > 20 {
				name = name[:20]
			}
			t.Run(name, func(t *testing.T) {
				if _, err := c.Search(context.Background(), q, SearchOptions{}); err != nil {
					t.Errorf("Search(%q) = %v; want no error", q, err)
				}
			})
		}
	})
}

func TestSearchQuotedFindsWords(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := searchFixture(t, b)
		for _, q := range []string{`"read file"`, `read-file`, `(read) [file]`, `read AND file`} {
			res, err := c.Search(context.Background(), q, SearchOptions{Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Results) == 0 || res.Results[0].Name != "read_file" {
				t.Errorf("Search(%q) = %v; want read_file first", q, refs(res.Results))
			}
		}
	})
}

func TestSearchDeterministic(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c, _ := b.openTemp(t)
		// Tools on several servers that tie on score (their descriptions differ
		// only by one word each, of equal weight): order is by server.
		for _, s := range []string{"zeta", "alpha", "mid"} {
			e := &Entry{Server: s, Hash: "1", Tools: []*mcp.Tool{{Name: "fetch", Description: "Fetch a URL, copy " + s + "."}}}
			if err := c.Put(context.Background(), e); err != nil {
				t.Fatal(err)
			}
		}
		want := []ref{{"alpha", "fetch"}, {"mid", "fetch"}, {"zeta", "fetch"}}
		for range 5 {
			res, err := c.Search(context.Background(), "fetch url", SearchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, refs(res.Results)); diff != "" {
				t.Fatalf("order (-want +got):\n%s", diff)
			}
		}
	})
}

func TestSearchPaging(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := searchFixture(t, b)
		ctx := context.Background()
		all, err := c.Search(ctx, "file", SearchOptions{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if all.Total < 3 || all.Total != len(all.Results) {
			t.Fatalf("Total = %d with %d results; want >= 3 and equal", all.Total, len(all.Results))
		}
		tests := []struct{ limit, offset, from, to int }{
			{1, 0, 0, 1},
			{2, 1, 1, 3},
			{2, all.Total - 1, all.Total - 1, all.Total},
			{5, all.Total, all.Total, all.Total},
			{5, all.Total + 10, all.Total, all.Total},
			{1, -3, 0, 1},
		}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("limit%d/offset%d", tt.limit, tt.offset), func(t *testing.T) {
				res, err := c.Search(ctx, "file", SearchOptions{Limit: tt.limit, Offset: tt.offset})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(refs(all.Results[tt.from:tt.to]), refs(res.Results)); diff != "" {
					t.Errorf("page (-want +got):\n%s", diff)
				}
				if res.Total != all.Total {
					t.Errorf("Total = %d; want %d", res.Total, all.Total)
				}
			})
		}
		res, _ := c.Search(ctx, "a", SearchOptions{})
		if len(res.Results) > DefaultLimit {
			t.Errorf("no Limit gave %d results; want at most %d", len(res.Results), DefaultLimit)
		}
	})
}

func TestSearchServerFilter(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := searchFixture(t, b)
		res, err := c.Search(context.Background(), "search file code", SearchOptions{Servers: []string{"files", "lang"}, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Results) == 0 {
			t.Fatal("found nothing")
		}
		for _, r := range res.Results {
			if r.Server != "files" && r.Server != "lang" {
				t.Errorf("result from %q outside the filter", r.Server)
			}
		}
	})
}

func TestSearchRegex(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := searchFixture(t, b)
		tests := []struct {
			pattern string
			want    []ref
		}{
			{"^issue_", []ref{{"github", "issue_create"}, {"github", "issue_list"}}},
			{"_FILE$", []ref{{"files", "read_file"}, {"files", "write_file"}}},
			{"^github/search$", []ref{{"github", "search"}}},
			// Name matches before description matches.
			{"library", []ref{{"context7", "get-library-docs"}, {"context7", "resolve-library-id"}}},
			{"clang", []ref{{"lang", "compile_cpp"}}},
			{"(?-i)^GitHub", []ref{{"github", "GitHubSearch"}}},
		}
		for _, tt := range tests {
			t.Run(tt.pattern, func(t *testing.T) {
				res, err := c.Search(context.Background(), tt.pattern, SearchOptions{Regex: true})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, refs(res.Results)); diff != "" {
					t.Errorf("Search(regex %q) (-want +got):\n%s", tt.pattern, diff)
				}
			})
		}
		for _, bad := range []string{"(", "[a-", "a{2,1}", `\`} {
			_, err := c.Search(context.Background(), bad, SearchOptions{Regex: true})
			if err == nil || !strings.Contains(err.Error(), "invalid regex") {
				t.Errorf("Search(regex %q) = %v; want an invalid regex error", bad, err)
			}
		}
	})
}

func TestSearchSeesWrites(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := searchFixture(t, b)
		ctx := context.Background()
		e := &Entry{Server: "new", Hash: "1", Tools: []*mcp.Tool{{Name: "quux_frobnicate"}}}
		if err := c.Put(ctx, e); err != nil {
			t.Fatal(err)
		}
		res, _ := c.Search(ctx, "frobnicate", SearchOptions{})
		if len(res.Results) != 1 {
			t.Fatalf("after Put: %v; want the new tool", refs(res.Results))
		}
		if err := c.Remove(ctx, "new"); err != nil {
			t.Fatal(err)
		}
		res, _ = c.Search(ctx, "frobnicate", SearchOptions{})
		if len(res.Results) != 0 {
			t.Errorf("after Remove: %v; want nothing", refs(res.Results))
		}
	})
}

func TestHeadline(t *testing.T) {
	long := strings.Repeat("é", headlineLen+5)
	tests := []struct{ in, want string }{
		{"", ""},
		{"  one line  ", "one line"},
		{"first\nsecond", "first"},
		{long, strings.Repeat("é", headlineLen-1) + "…"},
	}
	for _, tt := range tests {
		if got := headline(tt.in); got != tt.want {
			t.Errorf("headline(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"readFile", []string{"read", "file"}},
		{"HTMLParser2", []string{"html", "parser", "2"}},
		{"resolve-library-id", []string{"resolve", "library", "id"}},
		{"gh.search_code", []string{"gh", "search", "code"}},
		{"ipv4", []string{"ipv", "4"}},
		{"c++ and C#", []string{"cpp", "and", "csharp"}},
		{"文件搜索", []string{"文", "文件", "件", "件搜", "搜", "搜索", "索"}},
		{"get天气", []string{"get", "天", "天气", "气"}},
		{"Ünïcode façade", []string{"ünïcode", "façade"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, words(tt.in)); diff != "" {
			t.Errorf("words(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestStem(t *testing.T) {
	groups := [][]string{
		{"create", "creates", "created", "creating", "creation"},
		{"file", "files"},
		{"query", "queries"},
		{"process", "processes", "processing"},
		{"stop", "stopped", "stopping", "stops"},
		{"translate", "translation", "translated"},
	}
	for _, g := range groups {
		for _, w := range g[1:] {
			if stem(w) != stem(g[0]) {
				t.Errorf("stem(%q) = %q; want stem(%q) = %q", w, stem(w), g[0], stem(g[0]))
			}
		}
	}
	for _, w := range []string{"status", "analysis", "string", "class", "api"} {
		if got := stem(w); len(got) < 3 {
			t.Errorf("stem(%q) = %q: too short", w, got)
		}
	}
}

func FuzzSearch(f *testing.F) {
	for _, s := range []string{"", "c++", "文件搜索", `"q"`, "resolve-library-id", "(", "gh.search", "\xff"} {
		f.Add(s)
	}
	c := searchFixture(f, sqliteBackend)
	f.Fuzz(func(t *testing.T, q string) {
		res, err := c.Search(context.Background(), q, SearchOptions{})
		if err != nil {
			t.Fatalf("Search(%q) = %v", q, err)
		}
		if len(res.Results) > DefaultLimit || res.Total < len(res.Results) {
			t.Fatalf("Search(%q): %d results of %d", q, len(res.Results), res.Total)
		}
		// Regex mode may reject the pattern, but only with an error.
		if _, err := c.Search(context.Background(), q, SearchOptions{Regex: true}); err != nil && !strings.Contains(err.Error(), "invalid regex") {
			t.Fatalf("Search(regex %q) = %v", q, err)
		}
	})
}
