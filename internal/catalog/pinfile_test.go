package catalog

import (
	"context"
	"path/filepath"
	"testing"
)

// TestPinsFileMovesOnce: the catalog's pins are moved when the pins file
// is created, not again: pins written to the catalog later (by an older
// version still running) do not come back over newer ones.
func TestPinsFileMovesOnce(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	cat, err := Open(filepath.Join(dir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if err := cat.SetPins(ctx, []Pin{{Server: "s", Tool: "a", Hash: "h1", Def: "{}"}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pins.db")
	f, err := OpenPinFile(path, cat)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := f.Pins(ctx, "s"); p["a"].Hash != "h1" {
		t.Fatalf("moved pins %v, want a", p)
	}
	if err := f.SetPins(ctx, []Pin{{Server: "s", Tool: "a", Hash: "h2", Def: "{}"}}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := cat.SetPins(ctx, []Pin{{Server: "s", Tool: "a", Hash: "stale", Def: "{}"}}); err != nil {
		t.Fatal(err)
	}
	f, err = OpenPinFile(path, cat)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if p, _ := f.Pins(ctx, "s"); p["a"].Hash != "h2" {
		t.Errorf("pins after opening again %v, want a at h2", p)
	}
}

// TestSearchExclude: the tools SearchOptions.Exclude names are not found,
// by name, by words or by pattern.
func TestSearchExclude(t *testing.T) {
	c := searchFixture(t, sqliteBackend)
	for _, tc := range []struct {
		query string
		regex bool
	}{{"issue_create", false}, {"open a new issue", false}, {"issue", false}, {"issue_", true}} {
		opts := SearchOptions{Regex: tc.regex, Exclude: map[string][]string{"github": {"issue_create"}}}
		res, err := c.Search(context.Background(), tc.query, opts)
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, r := range res.Results {
			found[r.Server+"/"+r.Name] = true
		}
		if found["github/issue_create"] || !found["github/issue_list"] {
			t.Errorf("search %q (regex %v) finds %v; want issue_list, not the excluded issue_create", tc.query, tc.regex, found)
		}
	}
}
