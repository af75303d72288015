package catalog

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestBritishSpellingStemsAsAmerican(t *testing.T) {
	pairs := [][2]string{
		{"organise", "organize"}, {"organised", "organized"}, {"organisation", "organization"},
		{"analyse", "analyze"}, {"analysed", "analyzed"}, {"colour", "color"}, {"colours", "colors"},
		{"neighbourhood", "neighborhood"}, {"favourite", "favorite"}, {"centre", "center"},
		{"metres", "meters"}, {"licence", "license"}, {"licences", "licenses"}, {"defence", "defense"},
		{"catalogue", "catalog"}, {"dialogue", "dialog"}, {"programme", "program"},
		{"cancelled", "canceled"}, {"travelling", "traveling"}, {"labelled", "labeled"},
		{"modelling", "modeling"}, {"controlled", "control"}, {"installed", "install"},
		{"installing", "install"}, {"recalled", "recall"},
	}
	for _, p := range pairs {
		if a, b := stem(p[0]), stem(p[1]); a != b {
			t.Errorf("stem(%q) = %q, stem(%q) = %q: want the same", p[0], a, p[1], b)
		}
	}
	// Words whose letters only look like a British ending stay apart: the
	// rules ask for enough letters before it.
	apart := [][2]string{
		{"hours", "hors"}, {"flour", "flor"}, {"yours", "yors"}, {"analysis", "analyze"},
		{"spelled", "speled"}, {"stalled", "staled"}, {"shells", "shels"},
	}
	for _, p := range apart {
		if a, b := stem(p[0]), stem(p[1]); a == b {
			t.Errorf("stem(%q) = stem(%q) = %q: want them apart", p[0], p[1], a)
		}
	}
}

func TestSearchFindsAmericanSpellingFromBritish(t *testing.T) {
	c := catalogOf(t,
		&Entry{Server: "osm", Hash: "1", Tools: []*mcp.Tool{
			{Name: "analyze_neighborhood", Description: "Analyze the livability of a neighborhood."},
			{Name: "find_parking", Description: "Find parking near a place."},
		}},
		&Entry{Server: "npm", Hash: "1", Tools: []*mcp.Tool{
			{Name: "license_compatibility", Description: "Check license compatibility between packages."},
			{Name: "package_size", Description: "Get the bundle size of a package."},
		}},
	)
	wantFirst(t, c, [][2]string{
		{"is the neighbourhood good for a family", "analyze_neighborhood"},
		{"analyse the area", "analyze_neighborhood"},
		{"are their licences compatible", "license_compatibility"},
	})
}
