package gateway

import (
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestConnectListsEachPageOnce indexes a server with 10,000 tools (ten
// pages): the catalog refresh that a new connection starts in the
// background shares the lists the indexing fetches, so every page of every
// list is requested once.
func TestConnectListsEachPageOnce(t *testing.T) {
	s := mcptest.ManyServer(10000)
	srv := mcptest.ServeCounted(t, s)
	e := newEngine(t, map[string]def{"many": {"url": srv.URL, "requestTimeoutMs": 120000}}, nil)

	changed := handledChanges(e)
	results, err := e.Index(t.Context(), nil, nil)
	if err != nil || results[0].Error != "" || results[0].Tools != 10000 {
		t.Fatalf("indexing: %+v, %v; want 10000 tools", results, err)
	}
	waitRefreshed(t, e, changed)
	for method, want := range map[string]int{"tools/list": 10, "resources/list": 1, "resources/templates/list": 1, "prompts/list": 1} {
		if got := srv.Count(method); got != want {
			t.Errorf("%d %s requests, want %d", got, method, want)
		}
	}
}

// waitRefreshed waits until no catalog refresh is pending; changed receives
// a value after each one ends. A refresh that ends starts no other.
func waitRefreshed(t *testing.T, e *Engine, changed <-chan struct{}) {
	t.Helper()
	for {
		e.mu.Lock()
		pending := len(e.refresh)
		e.mu.Unlock()
		if pending == 0 {
			return
		}
		select {
		case <-changed:
		case <-time.After(time.Minute): // generous: not what is tested
			t.Fatal("the catalog refresh did not end within a minute")
		}
	}
}
