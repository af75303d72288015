package main

import (
	"strings"

	"github.com/switchboard-mcp/switchboard/proxy"
)

func searchCommand() *command {
	var server string
	var limit, offset int
	var regex, schemas, disabled, explain bool
	var queries queryList
	return verb{
		name: "search", summary: "find tools by what they do, across servers", usage: "QUERY… | --query Q [--query Q…] [--server S] [--limit N] [--offset N] [--regex] [--schemas] [--include-disabled] [--explain] [--json]",
		help: `Ranks the tools of every server (or of --server) against the query. Servers
never indexed are connected and indexed first; the rest answer from the
catalog without connecting. Any text is a valid query.

For a task that needs several tools, give one --query per need (the words
of the arguments, if any, are one more): every need gets its share of the
results, and each result says which need it answers.

--schemas shows each tool's parameters as a TypeScript type; --explain
says under each tool why it is where it is (docs/search.md). With
--include-disabled, disabled servers' tools are listed too, from what the
catalog kept of them, marked (disabled); they are never started.`,
		setup: func(f *flags) {
			f.StringVar(&server, "server", "", "search only this `server`")
			f.IntVar(&limit, "limit", proxy.DefaultLimit, "show at most `N` results (1-50)")
			f.IntVar(&offset, "offset", 0, "skip the first `N` results")
			f.BoolVar(&regex, "regex", false, "the query is a regular expression")
			f.Var(&queries, "query", "one need to search for (repeat for several)")
			f.BoolVar(&schemas, "schemas", false, "show each tool's parameters as a TypeScript type")
			f.BoolVar(&disabled, "include-disabled", false, "also list disabled servers' tools from the catalog")
			f.BoolVar(&explain, "explain", false, "say what placed each tool: the fields its words matched, and the query's action, the server's topic and the copy that works")
		},
		request: func(pos []string) (*proxy.Request, error) {
			if limit < 1 || limit > proxy.MaxLimit {
				return nil, usagef("--limit must be from 1 to %d", proxy.MaxLimit)
			}
			if offset < 0 {
				return nil, usagef("--offset must be 0 or more")
			}
			needs := []string(queries)
			if len(pos) > 0 {
				needs = append([]string{strings.Join(pos, " ")}, needs...)
			}
			switch {
			case len(needs) == 0:
				return nil, usagef("search needs a query: words as arguments, or --query")
			case len(needs) > proxy.MaxNeeds:
				return nil, usagef("search takes at most %d queries; got %d", proxy.MaxNeeds, len(needs))
			}
			req := &proxy.Request{Action: proxy.ActionSearch, Query: strings.Join(needs, "; "), Server: server, Limit: limit, Offset: offset, Regex: regex,
				IncludeSchemas: schemas, IncludeDisabled: disabled, Explain: explain}
			if len(needs) > 1 {
				req.Queries = needs
			}
			return req, nil
		},
	}.command()
}

// queryList collects the values of a repeated --query.
type queryList []string

func (q *queryList) String() string { return strings.Join(*q, "; ") }

func (q *queryList) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return usagef("--query must not be empty")
	}
	*q = append(*q, s)
	return nil
}
