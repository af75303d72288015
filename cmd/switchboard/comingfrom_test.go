package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
)

// comingFromSettings returns the settings keys docs/coming-from.md names
// for Switchboard (`settings.X`, in backquotes). The first column of a
// table row is the other system's side, which may name its own settings,
// so it is skipped.
func comingFromSettings(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../../docs/coming-from.md")
	if err != nil {
		t.Fatal(err)
	}
	code := regexp.MustCompile("`[^`]*`")
	key := regexp.MustCompile(`\bsettings\.([A-Za-z]+)`)
	var keys []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "|") {
			cells := strings.Split(line, "|")
			if len(cells) < 3 {
				continue
			}
			line = strings.Join(cells[2:], "|")
		}
		for _, span := range code.FindAllString(line, -1) {
			for _, m := range key.FindAllStringSubmatch(span, -1) {
				if !slices.Contains(keys, m[1]) {
					keys = append(keys, m[1])
				}
			}
		}
	}
	return keys
}

// unknownSetting reports whether Switchboard's configuration refuses key as
// an unknown field of settings, by loading a file of our own that sets it.
func unknownSetting(t *testing.T, key string) bool {
	t.Helper()
	home := t.TempDir()
	file := filepath.Join(home, "config.json")
	if err := os.WriteFile(file, []byte(`{"settings": {"`+key+`": null}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := config.Load(config.Dirs{Home: home, Explicit: file})
	for _, p := range c.Problems {
		if strings.Contains(p.Message, `unknown field "`+key+`"`) {
			return true
		}
	}
	return false
}

// TestComingFromNamesRealKeys: every Switchboard setting that
// docs/coming-from.md names is one the configuration accepts, so the page
// never sends a user of another adapter to a key that does not exist.
func TestComingFromNamesRealKeys(t *testing.T) {
	keys := comingFromSettings(t)
	if len(keys) < 10 {
		t.Fatalf("found %d settings keys in docs/coming-from.md (%v); the parser is broken", len(keys), keys)
	}
	// The check itself must catch a key that does not exist: pi-mcp-adapter's
	// settings.mcpFooterStatus is about its own terminal UI.
	if !unknownSetting(t, "mcpFooterStatus") {
		t.Fatal(`settings.mcpFooterStatus is not reported as an unknown field: the check cannot catch a wrong key`)
	}
	for _, k := range keys {
		if unknownSetting(t, k) {
			t.Errorf("docs/coming-from.md names `settings.%s`, which is not a Switchboard setting", k)
		}
	}
}
