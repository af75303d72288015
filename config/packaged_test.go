package config

import (
	"strings"
	"testing"
)

// A packaged server shadows a configured one of the same name (an enabled
// one, one a higher file disables, or an invalid one): the
// packaged one is in the copy, and a warning names where the other is.
func TestWithPackagedShadows(t *testing.T) {
	packaged := func(name string) []*Server {
		return []*Server{{Name: name, Source: PackagedSource, Type: TransportInProcess}}
	}
	for _, tc := range []struct {
		name  string
		files map[string]string // path under home → content
		want  []string          // in the warning
	}{
		{"configured", map[string]string{".config/switchboard/config.json": "{\"mcpServers\": {\n  \"shop\": {\"command\": \"x\"}}}"},
			[]string{"config.json:2:11: mcpServers.shop: shadowed: the host packages a server named \"shop\" with its binary, and that one is used, not this definition (hint: rename this one to use it too)"}},
		{"disabled above", map[string]string{
			".config/mcp/mcp.json":            `{"mcpServers": {"shop": {"command": "x"}}}`,
			".config/switchboard/config.json": `{"mcpServers": {"shop": {"disabled": true}}}`,
		}, []string{"mcp.json:1:25", "shadowed"}},
		{"broken", map[string]string{".config/switchboard/config.json": `{"mcpServers": {"shop": {"command": 1}}}`}, []string{"config.json:1:25", "shadowed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			for path, content := range tc.files {
				writeFile(t, home+"/"+path, content)
			}
			c := Load(Dirs{Home: home})
			got, err := c.WithPackaged(packaged("shop"))
			if err != nil {
				t.Fatal(err)
			}
			if s, ok := got.Server("shop"); !ok || !s.Packaged() {
				t.Errorf("shop in the copy: %+v, %v; want the packaged one", s, ok)
			}
			n := 0
			for _, s := range got.Servers {
				if s.Name == "shop" {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d servers named shop in the copy, want 1", n)
			}
			warnings := problemText(got.Warnings())
			for _, w := range tc.want {
				if !strings.Contains(warnings, w) {
					t.Errorf("warnings lack %q:\n%s", w, warnings)
				}
			}
			if len(c.Warnings()) != len(got.Warnings())-len(slicesOf(tc.want)) {
				t.Errorf("the original's warnings changed: %d, the copy's %d", len(c.Warnings()), len(got.Warnings()))
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

// slicesOf is one warning for a case that expects some, none otherwise.
func slicesOf(want []string) []string {
	if len(want) == 0 {
		return nil
	}
	return want[:1]
}
