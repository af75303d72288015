package registry_test

import (
	"context"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/registry"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/registrytest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// seed is the test entries, in the registry's own server.json format.
func seed() []any {
	npm := func(name, version string) map[string]any {
		return map[string]any{
			"$schema":     "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
			"name":        name,
			"description": "A knowledge graph memory server",
			"version":     version,
			"packages": []any{map[string]any{
				"registryType": "npm", "identifier": "@modelcontextprotocol/server-memory", "version": "2026.8.31",
				"transport": map[string]any{"type": "stdio"},
			}},
		}
	}
	return []any{npm("io.github.switchboard-test/memory", "1.0.0"), npm("io.github.switchboard-test/memory", "1.1.0"),
		npm("io.github.switchboard-test/other", "0.1.0")}
}

// TestRealRegistry asks the registry server itself: search with the
// cursor, one version, the latest, every version, and an unknown name.
func TestRealRegistry(t *testing.T) {
	base := registrytest.Start(t, seed()...)
	c, err := registry.New(base, &registry.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var names []string
	opts := registry.SearchOptions{Limit: 1}
	for page := 0; ; page++ {
		p, err := c.Search(ctx, "switchboard-test", opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range p.Entries {
			names = append(names, e.Server.Name+"@"+e.Server.Version)
		}
		if p.Next == "" || page > 5 {
			break
		}
		opts.Cursor = p.Next
	}
	if len(names) != 2 || names[0] != "io.github.switchboard-test/memory@1.1.0" || names[1] != "io.github.switchboard-test/other@0.1.0" {
		t.Errorf("search pages: got %v, want memory@1.1.0 and other@0.1.0", names)
	}
	e, _, err := c.Get(ctx, "io.github.switchboard-test/memory", "1.0.0")
	if err != nil || e.Server.Version != "1.0.0" || e.Server.Packages[0].Identifier != "@modelcontextprotocol/server-memory" {
		t.Errorf("get 1.0.0: %v, %+v", err, e)
	}
	e, _, err = c.Get(ctx, "io.github.switchboard-test/memory", "")
	if err != nil || e.Server.Version != "1.1.0" {
		t.Errorf("get latest: %v, %+v", err, e)
	}
	vs, _, err := c.Versions(ctx, "io.github.switchboard-test/memory")
	if err != nil || len(vs) != 2 {
		t.Errorf("versions: %v, %d entries", err, len(vs))
	}
	if _, _, err := c.Get(ctx, "io.github.switchboard-test/nope", ""); err == nil {
		t.Errorf("get of an unknown name: no error")
	}
}
