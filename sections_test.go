package switchboard_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestSections: a server's resource read once as a prompt section
// (terret-mcp's register_resource_section), labelled as untrusted data,
// listed by priority, replaced by the same server and URI, and removed
// with its server's (the unmount).
func TestSections(t *testing.T) {
	home := t.TempDir()
	path, args, env := testserver.Command(testserver.Good)
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"docs":  map[string]any{"command": path, "args": args, "env": env},
		"notes": map[string]any{"command": path, "args": args, "env": env},
	}})
	d := config.Dirs{Home: home}
	os.MkdirAll(filepath.Dir(d.UserFile()), 0o700)
	if err := os.WriteFile(d.UserFile(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	eng, err := switchboard.New(t.Context(), config.Load(d), &switchboard.Options{SpillDir: filepath.Join(home, "spill")})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()

	sec, err := eng.AddSection(t.Context(), "docs", "test://static", 20)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sec.Text, "static text") || !strings.HasPrefix(sec.Text, "<untrusted-data source=") || !strings.Contains(sec.Text, `test://static`) {
		t.Errorf("section text:\n%s", sec.Text)
	}
	if _, err := eng.AddSection(t.Context(), "notes", "test://static", 10); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.AddSection(t.Context(), "docs", "test://static", 20); err != nil { // replaces, not adds
		t.Fatal(err)
	}
	if _, err := eng.AddSection(t.Context(), "docs", "test://nowhere", 1); err == nil {
		t.Error("a resource the server does not have made a section")
	}
	var order []string
	for _, s := range eng.Sections() {
		order = append(order, s.Server)
	}
	if strings.Join(order, ",") != "notes,docs" {
		t.Errorf("sections by priority: %v, want notes,docs", order)
	}
	if n := eng.RemoveSections("docs"); n != 1 {
		t.Errorf("removed %d of docs's sections, want 1", n)
	}
	if s := eng.Sections(); len(s) != 1 || s[0].Server != "notes" {
		t.Errorf("after removing docs's: %+v", s)
	}
}
