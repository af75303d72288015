package config

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRoots: a server is offered roots only where a file says so, its own
// "roots" winning over settings.roots; "~" is the home directory, and
// "client" forwards the connected client's roots.
func TestRoots(t *testing.T) {
	servers := `{"mcpServers": {
		"plain": {"command": "x"},
		"fs": {"command": "x", "roots": ["~/projects", "/data", "~"]},
		"fwd": {"command": "x", "roots": ["client"]},
		"none": {"command": "x", "roots": []}
	}}`
	tests := []struct {
		name     string
		settings string
		want     map[string]*Roots // nil: no roots
	}{
		{
			name: "no settings",
			want: map[string]*Roots{
				"plain": nil,
				"fs":    {Dirs: []string{"HOME/projects", "/data", "HOME"}},
				"fwd":   {Dirs: []string{}, Client: true},
				"none":  {Dirs: []string{}},
			},
		},
		{
			name:     "settings.roots",
			settings: `{"settings": {"roots": ["~/work", "client"]}}`,
			want: map[string]*Roots{
				"plain": {Dirs: []string{"HOME/work"}, Client: true},
				"fs":    {Dirs: []string{"HOME/projects", "/data", "HOME"}},
				"fwd":   {Dirs: []string{}, Client: true},
				"none":  {Dirs: []string{}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirs(t)
			p := pathsOf(d)
			writeFile(t, p.shared, servers)
			if tt.settings != "" {
				writeFile(t, p.user, tt.settings)
			}
			c := Load(d)
			noErrors(t, c)
			for name, want := range tt.want {
				if want != nil {
					for i, dir := range want.Dirs {
						want.Dirs[i] = strings.Replace(dir, "HOME", d.Home, 1)
					}
				}
				got := mustServer(t, c, name).Roots
				if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b Roots) bool {
					return cmp.Equal(a.Dirs, b.Dirs) && a.Client == b.Client
				})); diff != "" {
					t.Errorf("%s roots (-want +got):\n%s", name, diff)
				}
				if got.Offers() != (want != nil && (len(want.Dirs) > 0 || want.Client)) {
					t.Errorf("%s: Offers() = %v", name, got.Offers())
				}
			}
		})
	}
}

// TestRootsProblems: a roots entry that is relative, empty or not a
// string is refused, naming the entry and what to write instead.
func TestRootsProblems(t *testing.T) {
	tests := []struct {
		text, path, msg string
	}{
		{srv(`{"command": "x", "roots": ["projects"]}`), "mcpServers.s.roots[0]", `"projects" is relative: write an absolute directory such as "/home/me/projects" or "~/projects"`},
		{srv(`{"command": "x", "roots": ["/a", "./b"]}`), "mcpServers.s.roots[1]", `"./b" is relative`},
		{srv(`{"command": "x", "roots": ["~user/x"]}`), "mcpServers.s.roots[0]", `"~user/x" is relative`},
		{srv(`{"command": "x", "roots": [""]}`), "mcpServers.s.roots[0]", "must not be empty"},
		{srv(`{"command": "x", "roots": "~"}`), "mcpServers.s.roots", "must be an array of strings, not a string"},
		{srv(`{"command": "x", "roots": [1]}`), "mcpServers.s.roots[0]", "must be a string, not a number"},
		{`{"settings": {"roots": ["."]}}`, "settings.roots[0]", `"." is relative`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			d := newDirs(t)
			writeFile(t, pathsOf(d).user, tt.text)
			c := Load(d)
			if serverOf(tt.path) == "" && c.Err() == nil {
				t.Fatalf("Err() = nil, want an error")
			}
			// An error in a server's entry is that server's (issue 30).
			if serverOf(tt.path) != "" {
				if c.Err() != nil {
					t.Errorf("Err() = %v, want the error scoped to the server", c.Err())
				}
				if _, err := c.Usable("s"); err == nil {
					t.Errorf("Usable(s): got no error, want the server invalid")
				}
			}
			var found bool
			for _, p := range c.Errors() {
				found = found || (p.Path == tt.path && strings.Contains(p.Message, tt.msg))
			}
			if !found {
				t.Errorf("problems = %v, want one at %s with %q", c.Problems, tt.path, tt.msg)
			}
		})
	}
}

// TestRootsAbsolute: Windows directories count as absolute in any file,
// so that one file serves every platform a user has.
func TestRootsAbsolute(t *testing.T) {
	for e, want := range map[string]bool{
		"/": true, "/home/me": true, "~": true, "~/x": true, `~\x`: true,
		`C:\work`: true, "c:/work": true, `\\host\share`: true,
		"": false, ".": false, "x": false, "C:": false, "C:work": false, `\work`: false, "~x": false, "1:/x": false,
	} {
		if got := absRoot(e); got != want {
			t.Errorf("absRoot(%q) = %v, want %v", e, got, want)
		}
	}
}

// TestRootsDefinition: a server's roots are written back as the file had
// them, an empty list included (it offers none, whatever settings say).
func TestRootsDefinition(t *testing.T) {
	d := newDirs(t)
	writeFile(t, pathsOf(d).user, `{"settings": {"roots": ["/s"]}, "mcpServers": {
		"a": {"command": "x", "roots": ["~/p", "client"]},
		"b": {"command": "x", "roots": []},
		"c": {"command": "x"}}}`)
	c := Load(d)
	noErrors(t, c)
	for name, want := range map[string]string{"a": `"roots":["~/p","client"]`, "b": `"roots":[]`, "c": ""} {
		b, _ := json.Marshal(mustServer(t, c, name).Definition())
		if got := string(b); (want == "" && strings.Contains(got, "roots")) || !strings.Contains(got, want) {
			t.Errorf("%s: definition %s, want %s", name, got, want)
		}
	}
	if got, want := mustServer(t, c, "a").Roots.Dirs, []string{filepath.Join(d.Home, "p")}; !cmp.Equal(got, want) {
		t.Errorf("a: dirs %q, want %q", got, want)
	}
}
