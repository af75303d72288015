package catalog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var equalTime = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

func ptr[T any](v T) *T { return &v }

func fullEntry() *Entry {
	return &Entry{
		Server: "github",
		Hash:   "h1",
		Tools: []*mcp.Tool{
			{
				Name:        "create_issue",
				Title:       "Create issue",
				Description: "Create a new issue in a GitHub repository.",
				InputSchema: map[string]any{
					"type":     "object",
					"required": []any{"repo", "title"},
					"properties": map[string]any{
						"repo":  map[string]any{"type": "string", "description": "owner/name"},
						"title": map[string]any{"type": "string"},
					},
				},
				OutputSchema: map[string]any{"type": "object"},
				Annotations:  &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(true), Title: "Create"},
				Meta:         mcp.Meta{"vendor": "x"},
				Icons:        []mcp.Icon{{Source: "https://example.com/i.png", MIMEType: "image/png"}},
			},
			{Name: "search_code", Description: "Search code.", InputSchema: map[string]any{"type": "object"}},
		},
		Resources: []*mcp.Resource{{URI: "repo://a", Name: "a", MIMEType: "text/plain", Size: 12}},
		ResourceTemplates: []*mcp.ResourceTemplate{
			{URITemplate: "repo://{owner}/{name}", Name: "repo", Description: "A repository"},
		},
		Prompts: []*mcp.Prompt{{
			Name:        "review",
			Description: "Review a pull request",
			Arguments:   []*mcp.PromptArgument{{Name: "pr", Description: "number", Required: true}},
		}},
		Instructions: "Use search_code before create_issue.",
		Keywords:     map[string][]string{"create_*": {"ticket"}},
		FetchedAt:    time.UnixMilli(1_800_000_000_123),
	}
}

func TestRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c, _ := b.openTemp(t)
		want := fullEntry()
		if err := c.Put(ctx, want); err != nil {
			t.Fatal(err)
		}
		got, ok, err := c.Get(ctx, "github", "h1")
		if err != nil || !ok {
			t.Fatalf("Get = %v, %v; want the entry", ok, err)
		}
		if diff := cmp.Diff(want, got, equalTime); diff != "" {
			t.Errorf("Get after Put (-want +got):\n%s", diff)
		}

		// A reopened catalog holds the same.
		c.Close()
		c2 := b.reopen(t, c)
		got, ok, err = c2.Get(ctx, "github", "h1")
		if err != nil || !ok {
			t.Fatalf("Get after reopening = %v, %v; want the entry", ok, err)
		}
		if got.Tools[0].Name != "create_issue" || len(got.Prompts[0].Arguments) != 1 {
			t.Errorf("after reopening got %+v", got)
		}
	})
}

func TestPutReplaces(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c, _ := b.openTemp(t)
		if err := c.Put(ctx, fullEntry()); err != nil {
			t.Fatal(err)
		}
		smaller := &Entry{Server: "github", Hash: "h2", Tools: []*mcp.Tool{{Name: "only"}}}
		if err := c.Put(ctx, smaller); err != nil {
			t.Fatal(err)
		}
		got, ok, err := c.Get(ctx, "github", "h2")
		if err != nil || !ok {
			t.Fatalf("Get = %v, %v", ok, err)
		}
		want := &Entry{Server: "github", Hash: "h2", Tools: []*mcp.Tool{{Name: "only"}}, FetchedAt: time.UnixMilli(time.Time{}.UnixMilli())}
		if diff := cmp.Diff(want, got, equalTime); diff != "" {
			t.Errorf("after replacing (-want +got):\n%s", diff)
		}
	})
}

// TestTouch: a server listed again with the lists the catalog holds moves
// only the entry's time, not the generation a search compares; an entry
// another handle replaced since (or another definition's) is left alone.
func TestTouch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c, _ := b.openTemp(t)
		ent := fullEntry()
		ent.FetchedAt = time.UnixMilli(1_000_000)
		if err := c.Put(ctx, ent); err != nil {
			t.Fatal(err)
		}
		gen, err := c.generation(ctx)
		if err != nil {
			t.Fatal(err)
		}
		later := time.UnixMilli(2_000_000)
		for _, tc := range []struct {
			name string
			hash string
			was  time.Time
		}{
			{"another definition's", "other", ent.FetchedAt},
			{"stored at another time", ent.Hash, ent.FetchedAt.Add(time.Millisecond)},
			{"another server's", ent.Hash, ent.FetchedAt},
		} {
			server := ent.Server
			if tc.name == "another server's" {
				server = "nothing-stored"
			}
			if ok, err := c.Touch(ctx, server, tc.hash, tc.was, later); ok || err != nil {
				t.Errorf("Touch of %s = %v, %v; want false, nil", tc.name, ok, err)
			}
		}
		if got, _, _ := c.Get(ctx, ent.Server, ent.Hash); !got.FetchedAt.Equal(ent.FetchedAt) {
			t.Errorf("after refused touches, fetched at %v; want %v", got.FetchedAt, ent.FetchedAt)
		}
		// Another handle, as another process, reads the entry it touches.
		o := b.reopen(t, c)
		if ok, err := o.Touch(ctx, ent.Server, ent.Hash, ent.FetchedAt, later); !ok || err != nil {
			t.Fatalf("Touch = %v, %v; want true", ok, err)
		}
		got, ok, err := c.Get(ctx, ent.Server, ent.Hash)
		if err != nil || !ok {
			t.Fatalf("Get = %v, %v", ok, err)
		}
		want := fullEntry()
		want.FetchedAt = later
		if diff := cmp.Diff(want, got, equalTime); diff != "" {
			t.Errorf("after the touch (-want +got):\n%s", diff)
		}
		if g, err := c.generation(ctx); err != nil || g != gen {
			t.Errorf("generation after the touch = %d, %v; want %d (the lists did not change)", g, err, gen)
		}
		// The handle that stored the entry first touches it no more: it is
		// not the entry it read.
		if ok, err := c.Touch(ctx, ent.Server, ent.Hash, ent.FetchedAt, later.Add(time.Second)); ok || err != nil {
			t.Errorf("a second touch from the time before = %v, %v; want false", ok, err)
		}
		// A listing that ended before the entry's time does not move it back.
		if ok, err := c.Touch(ctx, ent.Server, ent.Hash, later, ent.FetchedAt); !ok || err != nil {
			t.Errorf("a touch with an earlier time = %v, %v; want true", ok, err)
		}
		if got, _, _ := c.Get(ctx, ent.Server, ent.Hash); !got.FetchedAt.Equal(later) {
			t.Errorf("after a touch with an earlier time, fetched at %v; want %v", got.FetchedAt, later)
		}
	})
}

func TestInvalidation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c, _ := b.openTemp(t)
		for _, e := range []*Entry{fullEntry(), {Server: "time", Hash: "t1", Tools: []*mcp.Tool{{Name: "now"}}}} {
			if err := c.Put(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		tests := []struct {
			server, hash string
			want         bool
		}{
			{"github", "h1", true},
			{"github", "h2", false}, // definition changed: stale
			{"github", "", false},
			{"absent", "h1", false},
			{"time", "t1", true},
		}
		for _, tt := range tests {
			t.Run(tt.server+"/"+tt.hash, func(t *testing.T) {
				_, ok, err := c.Get(ctx, tt.server, tt.hash)
				if err != nil || ok != tt.want {
					t.Errorf("Get(%q, %q) = %v, %v; want %v, nil", tt.server, tt.hash, ok, err, tt.want)
				}
			})
		}

		removed, err := c.Prune(ctx, map[string]string{"github": "h2", "time": "t1"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"github"}, removed); diff != "" {
			t.Errorf("Prune removed (-want +got):\n%s", diff)
		}
		res, err := c.Search(ctx, "create issue", SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Results) != 0 {
			t.Errorf("search after pruning github found %+v; want nothing", res.Results)
		}
		if err := c.Remove(ctx, "time"); err != nil {
			t.Fatal(err)
		}
		if err := c.Remove(ctx, "time"); err != nil {
			t.Errorf("removing an absent server: %v", err)
		}
		servers, err := c.Servers(ctx)
		if err != nil || len(servers) != 0 {
			t.Errorf("Servers after removing all = %v, %v; want none", servers, err)
		}
	})
}

func TestServers(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c, _ := b.openTemp(t)
		at := time.UnixMilli(1_700_000_000_000)
		for _, e := range []*Entry{
			{Server: "b", Hash: "2", Tools: []*mcp.Tool{{Name: "x"}, {Name: "y"}}, FetchedAt: at},
			{Server: "a", Hash: "1", FetchedAt: at},
		} {
			if err := c.Put(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		got, err := c.Servers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := []ServerInfo{{Name: "a", Hash: "1", FetchedAt: at}, {Name: "b", Hash: "2", FetchedAt: at, Tools: 2}}
		if diff := cmp.Diff(want, got, equalTime); diff != "" {
			t.Errorf("Servers (-want +got):\n%s", diff)
		}
	})
}

func TestPutErrors(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		c, _ := b.openTemp(t)
		if err := c.Put(ctx, &Entry{}); err == nil {
			t.Error("Put with no server name succeeded")
		}
		bad := &Entry{Server: "s", Tools: []*mcp.Tool{{Name: "t", InputSchema: func() {}}}}
		if err := c.Put(ctx, bad); err == nil {
			t.Error("Put with an unmarshalable schema succeeded")
		}
		if _, ok, _ := c.Get(ctx, "s", ""); ok {
			t.Error("a failed Put left an entry behind")
		}
	})
}

func TestCloseIdempotent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c, _ := b.openTemp(t)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { c.Close() })
		}
		wg.Wait()
		if err := c.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}
	})
}

func TestNewerSchema(t *testing.T) {
	c, path := openTemp(t)
	if _, err := c.db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	_, err := Open(path)
	if !errors.Is(err, ErrNewerSchema) {
		t.Errorf("Open of a newer file = %v; want ErrNewerSchema", err)
	}
}

// TestConcurrentHandles runs writers and searchers on two handles of one
// file, as a CLI and a serve process would.
func TestConcurrentHandles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "catalog.db")
	var handles [2]*Catalog
	var wg sync.WaitGroup
	var openErr [2]error
	for i := range handles { // both create the file at once
		wg.Go(func() { handles[i], openErr[i] = Open(path) })
	}
	wg.Wait()
	for i, h := range handles {
		if openErr[i] != nil {
			t.Fatal(openErr[i])
		}
		defer h.Close()
	}
	const writers, rounds = 4, 15
	errs := make(chan error, 2*writers*rounds)
	for w := range writers {
		h := handles[w%2]
		wg.Go(func() {
			for r := range rounds {
				server := fmt.Sprintf("srv%d", w)
				e := &Entry{Server: server, Hash: fmt.Sprint(r), Tools: []*mcp.Tool{
					// Descriptions differ by server: identical tools would be
					// listed once (see TestSearchCollapsesDuplicates).
					{Name: fmt.Sprintf("tool_%d_a", r), Description: "reads files for " + server},
					{Name: fmt.Sprintf("tool_%d_b", r), Description: "writes files for " + server},
				}}
				if err := h.Put(ctx, e); err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Go(func() {
			other := handles[(w+1)%2]
			for range rounds {
				res, err := other.Search(ctx, "files", SearchOptions{Limit: 100})
				if err != nil {
					errs <- err
					return
				}
				// Each server's entry is atomic: its two tools come together.
				per := map[string]int{}
				for _, r := range res.Results {
					per[r.Server]++
				}
				for s, n := range per {
					if n != 2 {
						errs <- fmt.Errorf("search saw %d tools of %s; want 2 (a torn write)", n, s)
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Each handle sees the other's last writes.
	for i, h := range handles {
		res, err := h.Search(ctx, "files", SearchOptions{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if res.Total != 2*writers {
			t.Errorf("handle %d: %d results after all writes; want %d", i, res.Total, 2*writers)
		}
		for _, r := range res.Results {
			if want := fmt.Sprintf("tool_%d_", rounds-1); r.Name[:len(want)] != want {
				t.Errorf("handle %d: found %s/%s; want only round %d's tools", i, r.Server, r.Name, rounds-1)
			}
		}
	}
}
