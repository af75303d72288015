package main

import (
	"strings"

	"github.com/switchboard-mcp/switchboard/proxy"
)

func searchCommand() *command {
	var server string
	var limit, offset int
	var regex bool
	return verb{
		name: "search", summary: "find tools by what they do, across servers", usage: "QUERY… [--server S] [--limit N] [--offset N] [--regex] [--json]", args: 1,
		help: `Ranks the tools of every server (or of --server) against the query. Servers
never indexed are connected and indexed first; the rest answer from the
catalog without connecting. Any text is a valid query.`,
		setup: func(f *flags) {
			f.StringVar(&server, "server", "", "search only this `server`")
			f.IntVar(&limit, "limit", proxy.DefaultLimit, "show at most `N` results (1-50)")
			f.IntVar(&offset, "offset", 0, "skip the first `N` results")
			f.BoolVar(&regex, "regex", false, "the query is a regular expression")
		},
		request: func(pos []string) (*proxy.Request, error) {
			if limit < 1 || limit > proxy.MaxLimit {
				return nil, usagef("--limit must be from 1 to %d", proxy.MaxLimit)
			}
			if offset < 0 {
				return nil, usagef("--offset must be 0 or more")
			}
			return &proxy.Request{Action: proxy.ActionSearch, Query: strings.Join(pos, " "), Server: server, Limit: limit, Offset: offset, Regex: regex}, nil
		},
	}.command()
}
