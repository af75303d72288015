package switchboard_test

import (
	"strings"
	"testing"
)

// TestSections: a server's resource read once as a prompt section
// (terret-mcp's register_resource_section), labelled as untrusted data,
// listed by priority, replaced by the same server and URI, and removed
// with its server's (the unmount).
func TestSections(t *testing.T) {
	eng, _ := fixtureEngine(t, "docs", "notes")

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
