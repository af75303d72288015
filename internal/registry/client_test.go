package registry_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/registry"
)

const listAnswer = `{"servers":[
 {"server":{"name":"io.github.a/weather","description":"Weather forecasts","version":"1.2.0"},
  "_meta":{"io.modelcontextprotocol.registry/official":{"status":"active","isLatest":true}}},
 {"server":{"name":"io.github.a/old-weather","description":"Weather, old","version":"0.1.0"},
  "_meta":{"io.modelcontextprotocol.registry/official":{"status":"deprecated","isLatest":true}}},
 {"server":{"name":"not a name","description":"x","version":"1"}},
 {"server":{"name":"io.github.a/noversion","description":"x","version":""}}
],"metadata":{"nextCursor":"c2","count":4}}`

// registryAt serves answer at every path, and counts the requests.
func registryAt(t *testing.T, status int, answer string) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(answer))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestSearchActiveOnly(t *testing.T) {
	srv, _ := registryAt(t, 200, listAnswer)
	c, _ := registry.New(srv.URL, nil)
	p, err := c.Search(context.Background(), "weather", registry.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entries) != 1 || p.Entries[0].Server.Name != "io.github.a/weather" || p.Next != "c2" || p.Skipped != 2 {
		t.Errorf("got %d entries, next %q, skipped %d; want weather only, c2, 2", len(p.Entries), p.Next, p.Skipped)
	}
	p, err = c.Search(context.Background(), "weather", registry.SearchOptions{All: true})
	if err != nil || len(p.Entries) != 2 {
		t.Errorf("with All: %v, %d entries, want 2", err, len(p.Entries))
	}
	p, _ = c.Search(context.Background(), "weather old", registry.SearchOptions{All: true})
	if len(p.Entries) != 1 || p.Entries[0].Server.Name != "io.github.a/old-weather" {
		t.Errorf("every word must match: got %d entries", len(p.Entries))
	}
}

// TestOfflineCache: an answer is kept; when the registry is down, the
// kept answer comes back marked offline; a question never answered is
// ErrOffline.
func TestOfflineCache(t *testing.T) {
	cache := t.TempDir()
	srv, _ := registryAt(t, 200, listAnswer)
	c, _ := registry.New(srv.URL, &registry.Options{CacheDir: cache})
	if _, err := c.Search(context.Background(), "weather", registry.SearchOptions{}); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	p, err := c.Search(context.Background(), "weather", registry.SearchOptions{})
	if err != nil || !p.Offline || p.CachedAt.IsZero() || len(p.Entries) != 1 {
		t.Fatalf("offline search: err %v, page %+v", err, p)
	}
	_, err = c.Search(context.Background(), "rain", registry.SearchOptions{})
	if !errors.Is(err, registry.ErrOffline) {
		t.Errorf("an uncached search while offline: got %v, want ErrOffline", err)
	}
}

func TestBadAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		status       int
		want         error
	}{
		{"html", "<html>hello</html>", 200, registry.ErrGarbage},
		{"array", `[1,2]`, 200, registry.ErrGarbage},
		{"no servers", `{"metadata":{}}`, 200, registry.ErrGarbage},
		{"bad json", `{"servers":[`, 200, registry.ErrGarbage},
		{"500", `oops`, 500, registry.ErrOffline},
		{"404", `{}`, 404, registry.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := registryAt(t, tc.status, tc.answer)
			c, _ := registry.New(srv.URL, nil)
			_, err := c.Search(context.Background(), "x", registry.SearchOptions{})
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// TestGetChecksTheAnswer: an answer for another server or version is
// refused.
func TestGetChecksTheAnswer(t *testing.T) {
	srv, _ := registryAt(t, 200, `{"server":{"name":"io.github.evil/other","description":"x","version":"9.9.9"}}`)
	c, _ := registry.New(srv.URL, nil)
	_, _, err := c.Get(context.Background(), "io.github.a/weather", "1.0.0")
	if !errors.Is(err, registry.ErrGarbage) || !strings.Contains(err.Error(), "io.github.evil/other") {
		t.Errorf("got %v, want ErrGarbage naming the other server", err)
	}
}

func TestNewRefusesBadURL(t *testing.T) {
	for _, u := range []string{"ftp://x", "registry.example", "https://x/?q=1", "http://"} {
		if _, err := registry.New(u, nil); err == nil {
			t.Errorf("New(%q): no error", u)
		}
	}
}
