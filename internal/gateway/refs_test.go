package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// resourceServer serves two resources, test://NAME/1 and test://NAME/2,
// whose text is "NAME 1" and "NAME 2", and counts the requests it gets.
func resourceServer(t *testing.T, name string) *mcptest.Counted {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	for i := 1; i <= 2; i++ {
		s.AddResource(&mcp.Resource{URI: fmt.Sprintf("test://%s/%d", name, i), Name: fmt.Sprintf("%s-%d", name, i)},
			func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: fmt.Sprintf("%s %d", name, i)}}}, nil
			})
	}
	return mcptest.ServeCounted(t, s)
}

// listRefs lists a server's resources in a session and returns their
// references.
func listRefs(t *testing.T, s *Session, server string) []string {
	t.Helper()
	r := s.Handle(t.Context(), json.RawMessage(fmt.Sprintf(`{"operation":"resources.list","server":%q}`, server)))
	if r.IsError {
		t.Fatalf("listing %s: %s", server, r.Text)
	}
	var refs []string
	for _, info := range r.Details.Resources {
		refs = append(refs, info.Ref)
	}
	return refs
}

// read reads a reference in a session.
func read(t *testing.T, s *Session, server, ref string) *proxy.Result {
	t.Helper()
	return s.Handle(t.Context(), json.RawMessage(fmt.Sprintf(`{"operation":"resources.read","server":%q,"resource":%q}`, server, ref)))
}

// TestResourceRefsBelongToOneServer checks that references are unique in a
// session, so one server's reference is refused on another without a
// request, and that each session numbers its own.
func TestResourceRefsBelongToOneServer(t *testing.T) {
	a, b := resourceServer(t, "a"), resourceServer(t, "b")
	e := newEngine(t, map[string]def{"a": {"url": a.URL}, "b": {"url": b.URL}}, nil)
	s := e.def

	if got, want := listRefs(t, s, "a"), []string{"r1", "r2"}; !cmp.Equal(got, want) {
		t.Errorf("a's references: %v, want %v", got, want)
	}
	if got, want := listRefs(t, s, "b"), []string{"r3", "r4"}; !cmp.Equal(got, want) {
		t.Errorf("b's references: %v, want %v", got, want)
	}
	r := read(t, s, "b", "r1")
	if !r.IsError {
		t.Fatalf("a's r1 was read on b:\n%s", r.Text)
	}
	wantText(t, r, `"r1"`, `names a resource of "a", not of "b"`, `{"operation": "resources.list", "server": "b"}`)
	if n := a.Count("resources/read") + b.Count("resources/read"); n != 0 {
		t.Errorf("refusing a reference sent %d read requests, want none", n)
	}
	wantText(t, read(t, s, "a", "r2"), "a 2")
	wantText(t, read(t, s, "b", "r3"), "b 1")

	// Listing again on the same connection keeps the references.
	if got, want := listRefs(t, s, "a"), []string{"r1", "r2"}; !cmp.Equal(got, want) {
		t.Errorf("a's references listed again: %v, want %v", got, want)
	}
	// Another session has references of its own.
	other := e.NewSession()
	if got, want := listRefs(t, other, "b"), []string{"r1", "r2"}; !cmp.Equal(got, want) {
		t.Errorf("b's references in another session: %v, want %v", got, want)
	}
	r = read(t, other, "b", "r3")
	wantText(t, r, `"r3" on "b": this session was given no such reference`)
	wantText(t, read(t, other, "b", "r1"), "b 1")
	if n := b.Count("resources/read"); n != 2 {
		t.Errorf("b got %d read requests, want 2", n)
	}
}

// TestResourceRefsBoundToConnection checks that a reference from before a
// reconnect is refused without a request, also after listing again, which
// gives new references.
func TestResourceRefsBoundToConnection(t *testing.T) {
	a := resourceServer(t, "a")
	e := newEngine(t, map[string]def{"a": {"url": a.URL}}, nil)
	s := e.def
	if got, want := listRefs(t, s, "a"), []string{"r1", "r2"}; !cmp.Equal(got, want) {
		t.Errorf("references: %v, want %v", got, want)
	}
	must(t, e, `{"operation":"reconnect","server":"a"}`)
	r := read(t, s, "a", "r1")
	wantText(t, r, `"r1": it is from an earlier connection to "a"`, `list them again`)
	if got, want := listRefs(t, s, "a"), []string{"r3", "r4"}; !cmp.Equal(got, want) {
		t.Errorf("references after a reconnect: %v, want %v", got, want)
	}
	r = read(t, s, "a", "r1")
	if !r.IsError {
		t.Errorf("a reference from before the reconnect was read after listing again:\n%s", r.Text)
	}
	if n := a.Count("resources/read"); n != 0 {
		t.Errorf("stale references sent %d read requests, want none", n)
	}
	wantText(t, read(t, s, "a", "r3"), "a 1")
}

// TestResourceRefAfterConnectionLost checks that a reference of a
// connection that has ended is refused, without connecting again.
func TestResourceRefAfterConnectionLost(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	e := newEngine(t, map[string]def{"f": fixture(testserver.Good)}, nil)
	changed := make(chan struct{}, 1)
	defer e.Subscribe(func(context.Context, Event) {
		select {
		case changed <- struct{}{}:
		default:
		}
	})()
	s := e.def
	refs := listRefs(t, s, "f")
	gen, _ := e.connection("f")
	if r := handle(t, e, `{"tool":"crash","server":"f"}`); !r.IsError {
		t.Fatalf("crash: %s", r.Text)
	}
	for {
		if _, open := e.connection("f"); !open {
			break
		}
		select {
		case <-changed:
		case <-time.After(time.Minute): // generous: not what is tested
			t.Fatal("the crash was not noticed within a minute")
		}
	}
	r := read(t, s, "f", refs[0])
	wantText(t, r, fmt.Sprintf("%q: the connection to \"f\" it was listed on has closed since", refs[0]), "list them again")
	if now, open := e.connection("f"); now != gen || open || states(e)["f"] == upstream.StateConnecting {
		t.Errorf("refusing a reference connected again: generation %d (was %d), open %v", now, gen, open)
	}
}
