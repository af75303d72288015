package upstream_test

import (
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

func roots(uris ...string) []*mcp.Root {
	var out []*mcp.Root
	for _, u := range uris {
		out = append(out, &mcp.Root{URI: u})
	}
	return out
}

// acceptsClient returns srv, whose configuration accepts the client's
// roots ("roots": ["client"]).
func acceptsClient(srv *config.Server) *config.Server {
	srv.Roots = &config.Roots{Client: true}
	return srv
}

// TestRoots checks that every connection whose server accepts the client's
// roots offers them, that SetRoots notifies connected servers with
// roots/list_changed and that they then list the new roots, and that later
// connections get them too.
//
// "modern" speaks 2026-07-28 ("latest"; stdio is 2025-11-25 by default),
// where the server asks for the roots with each call that needs them (an
// input request) instead of keeping a list.
func TestRoots(t *testing.T) {
	changed := make(chan []string, 16)
	ts := mcptest.RootsServer(t, changed)
	modern := acceptsClient(fixture("modern", testserver.Roots))
	modern.ProtocolVersion = "latest"
	h := newPool(t, []*config.Server{
		acceptsClient(&config.Server{Name: "http", Type: config.TransportHTTP, URL: ts.URL, RequestTimeout: 20 * time.Second}),
		acceptsClient(fixture("stdio", testserver.Roots)),
		acceptsClient(fixture("late", testserver.Roots)),
		modern,
	}, &upstream.Options{Roots: roots("file:///a")})
	for _, name := range []string{"http", "stdio", "modern"} {
		if got, err := h.call(t.Context(), name, "roots", nil); err != nil || got != "file:///a" {
			t.Errorf("%s: roots = %q, %v; want file:///a", name, got, err)
		}
	}

	h.SetRoots(roots("file:///b", "file:///c"))
	want := []string{"file:///b", "file:///c"}
	waitRoots(t, changed, want)
	for _, name := range []string{"http", "stdio", "late", "modern"} {
		if got, err := h.call(t.Context(), name, "roots", nil); err != nil || got != strings.Join(want, "\n") {
			t.Errorf("%s after SetRoots: roots = %q, %v; want %q", name, got, err, want)
		}
	}

	h.SetRoots(nil)
	waitRoots(t, changed, []string{})
	for _, name := range []string{"stdio", "modern"} {
		if got, err := h.call(t.Context(), name, "roots", nil); err != nil || got != "no roots" {
			t.Errorf("%s after SetRoots(nil): roots = %q, %v; want none", name, got, err)
		}
	}
	if st := h.status("modern"); st.Protocol != "2026-07-28" {
		t.Errorf("modern speaks %q", st.Protocol)
	}
}

// TestRootsAreConfigured: a server is offered only the roots its
// configuration gives it. One with no roots is not even told the client
// has the capability, and the client's roots (Options.Roots, SetRoots)
// never reach it; one with directories gets them as file: roots and
// nothing of the client's; one with both gets both (go-sdk lists them by
// URI).
func TestRootsAreConfigured(t *testing.T) {
	changed := make(chan []string, 16)
	ts := mcptest.RootsServer(t, changed)
	dir := t.TempDir()
	dirs := fixture("dirs", testserver.Roots)
	dirs.Roots = &config.Roots{Dirs: []string{dir}}
	both := fixture("both", testserver.Roots)
	both.Roots = &config.Roots{Dirs: []string{dir}, Client: true}
	empty := fixture("empty", testserver.Roots)
	empty.Roots = &config.Roots{Dirs: []string{}}
	h := newPool(t, []*config.Server{
		fixture("none", testserver.Roots),
		empty,
		{Name: "http", Type: config.TransportHTTP, URL: ts.URL, RequestTimeout: 20 * time.Second},
		dirs,
		both,
	}, &upstream.Options{Roots: roots("file:///")})
	uri := (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
	want := map[string]string{
		"none":  "no roots capability",
		"empty": "no roots capability",
		"http":  "no roots capability",
		"dirs":  uri,
		"both":  "file:///\n" + uri,
	}
	check := func(when string) {
		t.Helper()
		for name, w := range want {
			if got, err := h.call(t.Context(), name, "roots", nil); err != nil || got != w {
				t.Errorf("%s %s: roots = %q, %v; want %q", name, when, got, err, w)
			}
		}
	}
	check("at first")
	h.SetRoots(roots("file:///etc"))
	want["both"] = "file:///etc\n" + uri
	check("after SetRoots")
}

// waitRoots waits until the server lists want after a list_changed; lists
// on the way (roots removed before others are added) are skipped.
func waitRoots(t *testing.T, changed <-chan []string, want []string) {
	t.Helper()
	timeout := time.NewTimer(20 * time.Second)
	defer timeout.Stop()
	var seen [][]string
	for {
		select {
		case got := <-changed:
			if slices.Equal(got, want) {
				return
			}
			seen = append(seen, got)
		case <-timeout.C:
			t.Fatalf("no roots/list_changed brought %q; lists seen: %q", want, seen)
		}
	}
}
