package config

import (
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config/hosts"
)

// TestSetupNamesAreServerNames: setup (package hosts, which cannot import
// config) accepts exactly the names ValidName accepts.
func TestSetupNamesAreServerNames(t *testing.T) {
	for _, name := range []string{"switchboard", "sb-2_x", strings.Repeat("a", 64), strings.Repeat("a", 65), "a b", "a.b", "é", "a/b", "-"} {
		_, err := hosts.PlanSetup(hosts.Dirs{Home: t.TempDir()}, "cursor", hosts.SetupOptions{Name: name, Command: "/bin/switchboard"})
		if got := err == nil; got != ValidName(name) {
			t.Errorf("%q: setup accepts it: %v, ValidName: %v", name, got, ValidName(name))
		}
	}
}
