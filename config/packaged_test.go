package config

import (
	"strings"
	"testing"
)

// A packaged server's name cannot be taken by any definition: an enabled
// one, one a higher file disables, or one too broken to keep.
func TestWithPackagedConflicts(t *testing.T) {
	packaged := func(name string) []*Server {
		return []*Server{{Name: name, Source: PackagedSource, Type: TransportInProcess}}
	}
	for _, tc := range []struct {
		name  string
		files map[string]string // path under home → content
		want  []string
	}{
		{"configured", map[string]string{".config/switchboard/config.json": "{\"mcpServers\": {\n  \"shop\": {\"command\": \"x\"}}}"},
			[]string{`server "shop" is packaged by the host and also configured at`, "config.json:2:11 (mcpServers.shop)"}},
		{"disabled above", map[string]string{
			".config/mcp/mcp.json":            `{"mcpServers": {"shop": {"command": "x"}}}`,
			".config/switchboard/config.json": `{"mcpServers": {"shop": {"disabled": true}}}`,
		}, []string{"mcp.json:1:25", "disabled by", "switchboard/config.json"}},
		{"broken", map[string]string{".config/switchboard/config.json": `{"mcpServers": {"shop": {"command": 1}}}`},
			[]string{`server "shop" is packaged by the host and also configured at`, "mcpServers.shop.command"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			for path, content := range tc.files {
				writeFile(t, home+"/"+path, content)
			}
			c := Load(Dirs{Home: home})
			_, err := c.WithPackaged(packaged("shop"))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
		})
	}
	c := Load(Dirs{Home: t.TempDir()})
	got, err := c.WithPackaged(packaged("shop"))
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := got.Server("shop"); !ok || !s.Packaged() || s.Target() != "packaged by the host" {
		t.Errorf("the packaged server in the copy: %+v, %v", s, ok)
	}
	if _, ok := c.Server("shop"); ok {
		t.Error("WithPackaged changed the configuration it copied")
	}
	if _, err := got.Usable("shop"); err != nil {
		t.Errorf("Usable(shop) = %v", err)
	}
}
