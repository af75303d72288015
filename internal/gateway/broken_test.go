package gateway

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestSearchPrefersTheCopyThatWorks: two copies of the everything server,
// one (ev2) with a variable that is not set. ev2's tools are in the
// catalog from when it could run (another process indexed it: the
// catalog is shared); ev2 sorts first, and would win a tie. "add two
// numbers" lists get-sum first, on the copy that works, and says that ev2
// cannot run (issue 35).
func TestSearchPrefersTheCopyThatWorks(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	p := mcptest.Peers(t)
	ev := peer(p.Everything())
	ev2 := mergeDef(ev, def{"env": map[string]string{"SB_SEARCH_COPY_TOKEN": "${SB_SEARCH_COPY_UNSET}"}})
	e := newEngine(t, map[string]def{"everything": ev, "ev2": ev2}, nil)

	// Index everything, and store its entry as ev2's, under ev2's
	// definition: what an index run with the variable set would have left.
	ent, err := e.entry(t.Context(), "everything")
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := e.cfg.Server("ev2")
	copyEnt := *ent
	copyEnt.Server, copyEnt.Hash = "ev2", e.memo.hash(s2)
	if err := e.cat.Put(t.Context(), &copyEnt); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := e.cat.Get(t.Context(), "ev2", copyEnt.Hash); !ok || err != nil {
		t.Fatalf("ev2's entry not stored: %v", err)
	}

	r := must(t, e, `{"search":"add two numbers"}`)
	if len(r.Details.Tools) == 0 {
		t.Fatalf("no results:\n%s", r.Text)
	}
	first := r.Details.Tools[0]
	if first.Server != "everything" || first.Name != "get-sum" {
		t.Errorf("first result %s/%s; want everything/get-sum\n%s", first.Server, first.Name, r.Text)
	}
	if !slices.Equal(first.Also, []string{"ev2"}) || !slices.Equal(first.CannotRun, []string{"ev2"}) {
		t.Errorf("first result also on %v, cannot run %v; want ev2 for both\n%s", first.Also, first.CannotRun, r.Text)
	}
	if !strings.Contains(r.Text, "everything_get-sum") || !strings.Contains(r.Text, "(cannot run now: ev2)") {
		t.Errorf("the text does not name the copy that works and the one that cannot run:\n%s", r.Text)
	}
}
