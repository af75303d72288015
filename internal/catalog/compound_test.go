package catalog

import (
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
	})
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"today's The Verge and InfoQ headlines", []string{stem("theverge"), "infoq"}},
		{"who is example.com registered with", []string{"whois"}},
		{"the Hacker News front page", []string{stem("hackernews")}},
		{"would it be quicker for me to walk", nil}, // "forme" is no name's word, whatever its stem
		{"the, verge", nil}, // not across a comma
	} {
		if got := ix.compounds(tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("compounds(%q) = %q, want %q", tc.query, got, tc.want)
		}
	}
}

func TestSearchMatchesNamesWrittenAsOneWord(t *testing.T) {
	c := catalogOf(t,
		&Entry{Server: "trends", Hash: "1", Tools: []*mcp.Tool{
			{Name: "get-theverge-news", Description: "获取 The Verge 新闻"},
			{Name: "get-infoq-news", Description: "获取 InfoQ 技术资讯"},
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
