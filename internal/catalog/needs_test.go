package catalog

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// needsFixture has many strong matches for "issue" and few for the other
// needs, so that a plain ranking would give "issue" every place.
func needsFixture(t *testing.T, b backend) *Catalog {
	t.Helper()
	c, _ := b.openTemp(t)
	var issues []*mcp.Tool
	for i := range 12 {
		issues = append(issues, &mcp.Tool{Name: fmt.Sprintf("issue_%d", i), Description: fmt.Sprintf("Issue tool %d: create, list and close issues.", i)})
	}
	for _, e := range []*Entry{
		{Server: "tracker", Hash: "1", Tools: issues},
		{Server: "files", Hash: "1", Tools: []*mcp.Tool{
			{Name: "write_file", Description: "Write content to a file."},
			{Name: "read_file", Description: "Read a file."},
		}},
		{Server: "time", Hash: "1", Tools: []*mcp.Tool{
			{Name: "get_current_time", Description: "Get the current date and time."},
			{Name: "convert_time", Description: "Convert a time between time zones."},
		}},
		{Server: "web", Hash: "1", Tools: []*mcp.Tool{{Name: "navigate", Description: "Open a web page URL in the browser."}}},
	} {
		if err := c.Put(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestSearchAllGivesEveryNeedItsShare(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := needsFixture(t, b)
		ctx := context.Background()
		for _, tt := range []struct {
			queries []string
			limit   int
			want    map[int]int // places per need
		}{
			{[]string{"issue", "write file", "current time"}, 6, map[int]int{0: 2, 1: 2, 2: 2}},
			{[]string{"issue", "browser"}, 10, map[int]int{0: 9, 1: 1}},      // a need with one match leaves its places to the others
			{[]string{"issue", "issue tracker"}, 4, map[int]int{0: 2, 1: 2}}, // the same tools: each listed once
			{[]string{"issue"}, 5, map[int]int{0: 5}},
		} {
			res, err := c.SearchAll(ctx, tt.queries, SearchOptions{Limit: tt.limit})
			if err != nil {
				t.Fatal(err)
			}
			got := map[int]int{}
			seen := map[string]bool{}
			for _, r := range res.Results {
				got[r.Need]++
				if seen[r.Server+"/"+r.Name] {
					t.Errorf("%q: %s/%s listed twice", tt.queries, r.Server, r.Name)
				}
				seen[r.Server+"/"+r.Name] = true
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%q: places per need (-want +got):\n%s\n%v", tt.queries, diff, refs(res.Results))
			}
		}
		// The first place of each need is its best tool, in need order.
		res, err := c.SearchAll(ctx, []string{"issue", "write file", "current time"}, SearchOptions{Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := refs(res.Results)[1:], []ref{{"files", "write_file"}, {"time", "get_current_time"}}; !cmp.Equal(got, want) {
			t.Errorf("places 2 and 3 = %v, want %v", got, want)
		}
		// Paging continues the same turns.
		page2, err := c.SearchAll(ctx, []string{"issue", "write file", "current time"}, SearchOptions{Limit: 3, Offset: 3})
		if err != nil {
			t.Fatal(err)
		}
		all, _ := c.SearchAll(ctx, []string{"issue", "write file", "current time"}, SearchOptions{Limit: 6})
		if !cmp.Equal(refs(all.Results)[3:], refs(page2.Results)) {
			t.Errorf("page 2 = %v, want the last 3 of %v", refs(page2.Results), refs(all.Results))
		}
		if _, err := c.SearchAll(ctx, nil, SearchOptions{}); err == nil {
			t.Error("SearchAll with no query: no error")
		}
		if _, err := c.SearchAll(ctx, []string{"ok", "("}, SearchOptions{Regex: true}); err == nil {
			t.Error("SearchAll with an invalid pattern among several: no error")
		}
	})
}

func TestSearchImpliedNeeds(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c := needsFixture(t, b)
		for _, tt := range []struct {
			query, first, implied, want string
		}{
			{"close issue 7 and save a note about it to /tmp/notes/issue.md", "tracker", "write a file", "write_file"},
			{"list the issues that are due by next friday", "tracker", "today's date", "get_current_time"},
			{"read the file described at example.com/files/7", "files", "open a web page", "navigate"},
		} {
			res, err := c.Search(context.Background(), tt.query, SearchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if r := res.Results[0]; r.Implied != "" || r.Server != tt.first {
				t.Errorf("%q: first result %+v, want one of %s, for the query's own words", tt.query, r, tt.first)
			}
			perLabel := map[string]int{}
			found := false
			for _, r := range res.Results {
				if r.Implied != "" {
					perLabel[r.Implied]++
				}
				if r.Name == tt.want {
					found = true
					if r.Implied != tt.implied {
						t.Errorf("%q: %s placed for %q, want for the implied %q", tt.query, r.Name, r.Implied, tt.implied)
					}
				}
			}
			if !found {
				t.Errorf("%q: no %s among %v", tt.query, tt.want, refs(res.Results))
			}
			for label, n := range perLabel {
				if n > maxImplied {
					t.Errorf("%q: implied %q placed %d tools, want at most %d", tt.query, label, n, maxImplied)
				}
			}
		}
	})
}

func TestSearchCollapsesDuplicates(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c, _ := b.openTemp(t)
		ctx := context.Background()
		fetch := func() *mcp.Tool { return &mcp.Tool{Name: "fetch", Description: "Fetch a URL and return its text."} }
		for _, e := range []*Entry{
			{Server: "fetch", Hash: "1", Tools: []*mcp.Tool{fetch()}},
			{Server: "fetch-fork", Hash: "1", Tools: []*mcp.Tool{fetch()}},
			{Server: "fetch-lite", Hash: "1", Tools: []*mcp.Tool{fetch(), {Name: "fetch_json", Description: "Fetch a URL as JSON."}}},
			// Same name, other description: another tool.
			{Server: "fetch-plus", Hash: "1", Tools: []*mcp.Tool{{Name: "fetch", Description: "Fetch a URL, with retries."}}},
			// Same name, no description: nothing says they are the same.
			{Server: "a", Hash: "1", Tools: []*mcp.Tool{{Name: "fetch"}}},
			{Server: "b", Hash: "1", Tools: []*mcp.Tool{{Name: "fetch"}}},
		} {
			if err := c.Put(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		res, err := c.Search(ctx, "fetch", SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		type row struct {
			Server, Name string
			Also         []string
		}
		var got []row
		for _, r := range res.Results {
			got = append(got, row{r.Server, r.Name, r.Also})
		}
		want := []row{
			{"a", "fetch", nil}, {"b", "fetch", nil},
			{"fetch", "fetch", []string{"fetch-fork", "fetch-lite"}},
			{"fetch-lite", "fetch_json", nil},
			{"fetch-plus", "fetch", nil},
		}
		byServer := cmpopts.SortSlices(func(a, b row) bool { return a.Server < b.Server })
		if diff := cmp.Diff(want, got, byServer); diff != "" {
			t.Errorf("results (-want +got):\n%s", diff)
		}
		if res.Total != len(want) {
			t.Errorf("Total = %d, want %d: duplicates count once", res.Total, len(want))
		}
		// Only the servers searched are named; a search of one copy finds it.
		res, err = c.Search(ctx, "fetch url text", SearchOptions{Servers: []string{"fetch-fork", "fetch-lite"}, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r := res.Results[0]; r.Name != "fetch" || len(r.Also) != 1 || r.Also[0] != map[string]string{"fetch-fork": "fetch-lite", "fetch-lite": "fetch-fork"}[r.Server] {
			t.Errorf("search of two copies: %+v, want one fetch naming the other", r)
		}
		// Regex search collapses too.
		res, err = c.Search(ctx, "^fetch$", SearchOptions{Regex: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 4 {
			t.Errorf("regex: %d results %v, want 4", res.Total, refs(res.Results))
		}
	})
}

// TestGenericSearchNotBuried checks that a terse, generic web search tool
// is found for a request to find information on a topic that many
// specific tools' words match better.
func TestGenericSearchNotBuried(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c, _ := b.openTemp(t)
		ctx := context.Background()
		var rover []*mcp.Tool
		for i, what := range []string{"photos", "telemetry", "landing site", "mission timeline", "latest images", "instrument status",
			"landing video", "news feed", "route", "weather", "camera list", "landing ellipse"} {
			rover = append(rover, &mcp.Tool{Name: fmt.Sprintf("mars_rover_%d", i), Description: "Get the Mars rover " + what + " from the latest landing mission."})
		}
		for _, e := range []*Entry{
			{Server: "nasa", Hash: "1", Tools: rover},
			{Server: "ddg", Hash: "1", Tools: []*mcp.Tool{{Name: "search", Description: "Perform a web search query."}}},
		} {
			if err := c.Put(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		res, err := c.Search(ctx, "what is the latest news on the Mars rover landing", SearchOptions{Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range res.Results {
			found = found || r.Server == "ddg"
		}
		if !found {
			t.Errorf("top 3 = %v, want ddg's search among them", refs(res.Results))
		}
	})
}

// TestSearchCollapsesNearDuplicates: a fork that rewords its tool's
// description a little is a copy; one whose description says something
// else, or too little to tell, is another tool, and so is one whose short
// description gains the few words that tell it apart (where it reads); and
// a tool the query names exactly, server and all, is the copy listed.
func TestSearchCollapsesNearDuplicates(t *testing.T) {
	const forecast = "Get the weather forecast for a city, day by day: temperature, rain, wind, humidity and air pressure for each of the next seven days, with sunrise and sunset."
	const read = "Read the contents of a file."
	c := catalogOf(t,
		&Entry{Server: "weather", Hash: "1", Tools: []*mcp.Tool{{Name: "get_forecast", Description: forecast}}},
		&Entry{Server: "weather-fork", Hash: "1", Tools: []*mcp.Tool{{Name: "get_forecast", Description: "Fork: " + forecast}}},
		&Entry{Server: "weather-v2", Hash: "1", Tools: []*mcp.Tool{{Name: "getForecast", Description: "Uses the v2 API. " + forecast}}},
		&Entry{Server: "airq", Hash: "1", Tools: []*mcp.Tool{{Name: "get_forecast", Description: "Get the air quality forecast for a city."}}},
		&Entry{Server: "s1", Hash: "1", Tools: []*mcp.Tool{{Name: "forecast", Description: "Forecast."}}},
		&Entry{Server: "s2", Hash: "1", Tools: []*mcp.Tool{{Name: "forecast", Description: "Fork: Forecast."}}},
		&Entry{Server: "filesystem", Hash: "1", Tools: []*mcp.Tool{{Name: "read_file", Description: read}}},
		&Entry{Server: "sftp", Hash: "1", Tools: []*mcp.Tool{{Name: "read_file", Description: "Read the contents of a file on a remote SFTP server."}}},
		&Entry{Server: "s3", Hash: "1", Tools: []*mcp.Tool{{Name: "read_file", Description: "Read the contents of a file in an S3 bucket."}}},
	)
	type row struct {
		Server, Name string
		Also         []string
	}
	rows := func(query string) []row {
		t.Helper()
		res, err := c.Search(context.Background(), query, SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []row
		for _, r := range res.Results {
			got = append(got, row{r.Server, r.Name, r.Also})
		}
		return got
	}
	byServer := cmpopts.SortSlices(func(a, b row) bool { return a.Server < b.Server })
	want := []row{
		{"airq", "get_forecast", nil},
		{"s1", "forecast", nil}, {"s2", "forecast", nil},
		{"weather", "get_forecast", []string{"weather-fork", "weather-v2"}},
	}
	if diff := cmp.Diff(want, rows("weather forecast"), byServer); diff != "" {
		t.Errorf("weather forecast (-want +got):\n%s", diff)
	}
	got := rows("weather-fork get_forecast")
	if len(got) == 0 || got[0].Server != "weather-fork" || !slices.Equal(got[0].Also, []string{"weather", "weather-v2"}) {
		t.Errorf("weather-fork get_forecast: %+v; want weather-fork's first, naming the other copies", got)
	}
	var reads []row
	for _, r := range rows("read_file") {
		if r.Name == "read_file" {
			reads = append(reads, r)
		}
	}
	if diff := cmp.Diff([]row{{"filesystem", "read_file", nil}, {"s3", "read_file", nil}, {"sftp", "read_file", nil}}, reads, byServer); diff != "" {
		t.Errorf("read_file (-want +got):\n%s", diff)
	}
}
