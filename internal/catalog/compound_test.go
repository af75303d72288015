package catalog

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCompoundWords(t *testing.T) {
	ix := buildIndex(1, []toolDoc{
		{Server: "trends", Name: "get-theverge-news", Description: "获取 The Verge 新闻"},
		{Server: "trends", Name: "get-infoq-news", Description: "获取 InfoQ 技术资讯"},
		{Server: "whois", Name: "whois_domain", Description: "Looks up whois information about the domain"},
		{Server: "hackernews", Name: "getStories", Description: "Get stories by type"},
		{Server: "web", Name: "fill_form", Description: "Fill in a web form."},
		{Server: "crm", Name: "update_contact", Description: "Change a contact's details."},
	})
	weak := weightStopCompound
	for _, tc := range []struct {
		query string
		want  map[string]float64
	}{
		{"today's The Verge and InfoQ headlines", map[string]float64{stem("theverge"): weak, "infoq": 1}},
		{"Verge's top stories", map[string]float64{}},
		{"hacker news' and The Verge's top stories", map[string]float64{stem("hackernews"): 1, stem("theverge"): weak}},
		{"who is example.com registered with", map[string]float64{"whois": 1}}, // stop words alone: no other reading
		{`the "Hacker News" front page`, map[string]float64{stem("hackernews"): 1}},
		{"look up the date of birth", map[string]float64{}},                    // "up the date" is three words
		{"look it up: date of birth", map[string]float64{}},                    // not across a colon
		{"when did they sign up date wise", map[string]float64{"updat": weak}}, // a stop word in it: weak
		{"would it be quicker for me to walk", map[string]float64{}},           // "forme" is no name's word, whatever its stem
		{"the, verge", map[string]float64{}},                                   // not across a comma
	} {
		if got := ix.compounds(tc.query); !maps.Equal(got, tc.want) {
			t.Errorf("compounds(%q) = %v, want %v", tc.query, got, tc.want)
		}
	}
}

func TestSearchMatchesNamesWrittenAsOneWord(t *testing.T) {
	c := catalogOf(t,
		&Entry{Server: "trends", Hash: "1", Tools: []*mcp.Tool{
			{Name: "get-theverge-news", Description: "获取新闻"},
			{Name: "get-infoq-news", Description: "获取技术资讯"},
			{Name: "get-bbc-news", Description: "获取 BBC 新闻"},
		}},
		&Entry{Server: "whois", Hash: "1", Tools: []*mcp.Tool{
			{Name: "whois_domain", Description: "Looks up whois information about the domain"},
		}},
		&Entry{Server: "calendar", Hash: "1", Tools: []*mcp.Tool{
			{Name: "registration_dates", Description: "List when each user registered."},
		}},
	)
	wantFirst(t, c, [][2]string{
		{"headlines from The Verge", "get-theverge-news"},
		{"InfoQ headlines", "get-infoq-news"},
		{"who is stripe.com registered with", "whois_domain"},
	})
}

// TestExplainNamesCompounds: --explain says a name matched the query's
// words written as one, not "a related word".
func TestExplainNamesCompounds(t *testing.T) {
	c := catalogOf(t, &Entry{Server: "trends", Hash: "1", Tools: []*mcp.Tool{{Name: "get-theverge-news", Description: "获取新闻"}}})
	res, err := c.Search(context.Background(), "headlines from The Verge", SearchOptions{Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%q… (words of the query written as one) in name", stem("theverge"))
	if len(res.Results) == 0 || !slices.Contains(res.Results[0].Why, want) {
		t.Fatalf("why = %v; want %q", res.Results, want)
	}
}
