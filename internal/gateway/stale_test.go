package gateway

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestSearchSkipsEarlierDefinition indexes a server, changes its
// definition so that it cannot connect, and searches: the tools of the
// earlier definition are not found, and the answer says the server was
// not searched and why.
func TestSearchSkipsEarlierDefinition(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := t.TempDir()
	servers := map[string]def{"tools": fixture(testserver.Catalog), "good": fixture(testserver.Good)}
	first := engineIn(t, home, servers, nil, nil)
	if _, err := first.Index(t.Context(), nil, nil); err != nil {
		t.Fatal(err)
	}
	first.Close()

	missing := filepath.Join(t.TempDir(), "no-such-server")
	servers["tools"] = def{"command": missing}
	e := engineIn(t, home, servers, nil, nil)
	// Limited to the failed server, the search is that server's error.
	r := handle(t, e, `{"search":"issue_create","server":"tools"}`)
	if !r.IsError || len(r.Details.Tools) != 0 {
		t.Errorf("search on the failed server alone: isError %v, tools %v; want its error", r.IsError, r.Details.Tools)
	}
	wantText(t, r, `connecting "tools"`, missing)
	for _, req := range []string{`{"search":"create issue"}`, `{"search":"^issue_","regex":true}`} {
		r := must(t, e, req)
		for _, tool := range r.Details.Tools {
			if tool.Server == "tools" {
				t.Errorf("%s: found %s of the earlier definition of \"tools\":\n%s", req, tool.Name, r.Text)
			}
		}
		if got := r.Details.Search.Failed; !cmp.Equal(got, []string{"tools"}) {
			t.Errorf("%s: failed = %v, want [tools]", req, got)
		}
		wantText(t, r, `not searched: "tools": connecting "tools"`, missing)
	}
	r = must(t, e, `{"search":"echo"}`)
	if len(r.Details.Tools) == 0 || r.Details.Tools[0].Server != "good" || r.Details.Tools[0].Name != "echo" {
		t.Errorf("search for echo: got %+v first, want good's echo\n%s", r.Details.Tools, r.Text)
	}
}

// TestSearchSkipsDisabled checks that a search with no usable server finds
// nothing, not every tool the catalog holds.
func TestSearchSkipsDisabled(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := t.TempDir()
	first := engineIn(t, home, map[string]def{"tools": fixture(testserver.Catalog)}, nil, nil)
	if _, err := first.Index(t.Context(), nil, nil); err != nil {
		t.Fatal(err)
	}
	first.Close()
	e := engineIn(t, home, map[string]def{"tools": mergeDef(fixture(testserver.Catalog), def{"disabled": true})}, nil, nil)
	r := must(t, e, `{"search":"create issue"}`)
	if len(r.Details.Tools) != 0 {
		t.Errorf("search with every server disabled found %v:\n%s", names(r.Details.Tools), r.Text)
	}
}
