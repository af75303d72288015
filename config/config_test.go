package config

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The tests describe a fake machine with Dirs: a home directory in
// t.TempDir() and a project inside it. Nothing reads the real environment.

// newDirs returns Dirs for a fresh fake machine. The project directory
// exists but holds no file; the explicit file holds an empty object.
func newDirs(t *testing.T) Dirs {
	t.Helper()
	home := t.TempDir()
	proj := filepath.Join(home, "src", "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	explicit := filepath.Join(home, "explicit.json")
	// An explicit file that does not exist is an error, so every fake
	// machine starts with an empty one.
	if err := os.WriteFile(explicit, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return Dirs{Home: home, Project: proj, Explicit: explicit}
}

// paths names the files of every source of d.
type paths struct {
	shared, agents, agentsNested, user, projectShared, project, explicit string
}

func pathsOf(d Dirs) paths {
	return paths{
		shared:        filepath.Join(d.Home, ".config", "mcp", "mcp.json"),
		agents:        filepath.Join(d.Home, ".agents", "mcp.json"),
		agentsNested:  filepath.Join(d.Home, ".agents", "mcp", "mcp.json"),
		user:          filepath.Join(d.Home, ".config", "switchboard", "config.json"),
		projectShared: filepath.Join(d.Project, ".mcp.json"),
		project:       filepath.Join(d.Project, ".switchboard", "config.json"),
		explicit:      d.Explicit,
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// trust trusts the project of d as it is now.
func trust(t *testing.T, d Dirs) {
	t.Helper()
	if _, err := Trust(d, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		t.Fatalf("Trust: %v", err)
	}
}

// mustServer returns the effective definition of name.
func mustServer(t *testing.T, c *Config, name string) *Server {
	t.Helper()
	s, ok := c.Server(name)
	if !ok {
		t.Fatalf("Server(%q): not found; servers are %v; problems: %v", name, allNames(c), c.Problems)
	}
	return s
}

// noErrors fails the test if c has error problems or failed closed.
func noErrors(t *testing.T, c *Config) {
	t.Helper()
	if errs := c.Errors(); len(errs) > 0 || c.Err() != nil {
		t.Fatalf("got errors %v (Err %v), want none", errs, c.Err())
	}
}

func problemText(ps []Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Error())
		b.WriteByte('\n')
	}
	return b.String()
}

func TestFromEnv(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name string
		env  map[string]string
		goos string
		want Dirs
	}{
		{
			name: "defaults",
			env:  map[string]string{"HOME": home},
			want: Dirs{
				Home:       home,
				ConfigHome: filepath.Join(home, ".config"),
				StateHome:  filepath.Join(home, ".local", "state"),
				CacheHome:  filepath.Join(home, ".cache"),
				CodexHome:  filepath.Join(home, ".codex"),
				GOOS:       "linux",
				Project:    home,
			},
		},
		{
			name: "every variable",
			env: map[string]string{
				"HOME": home, "XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s", "XDG_CACHE_HOME": "/k",
				"SWITCHBOARD_CONFIG": "/e.json", "CODEX_HOME": "/x",
			},
			goos: "darwin",
			want: Dirs{
				Home: home, ConfigHome: "/c", StateHome: "/s", CacheHome: "/k",
				Explicit: "/e.json", CodexHome: "/x", GOOS: "darwin", Project: home,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FromEnv(func(k string) string { return tt.env[k] }, home, tt.goos)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FromEnv (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromEnvProject(t *testing.T) {
	home := t.TempDir()
	for _, dir := range []string{
		"a/b/c", "a/.switchboard", // a holds .switchboard
		"m/n", // m holds .mcp.json
		"plain/sub",
	} {
		if err := os.MkdirAll(filepath.Join(home, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(home, "m", ".mcp.json"), `{}`)
	writeFile(t, filepath.Join(home, ".mcp.json"), `{}`) // home itself is never a project by marker
	tests := []struct {
		name, cwd, home, want string
	}{
		{"marker .switchboard above", filepath.Join(home, "a", "b", "c"), home, filepath.Join(home, "a")},
		{"marker .mcp.json above", filepath.Join(home, "m", "n"), home, filepath.Join(home, "m")},
		{"marker in cwd", filepath.Join(home, "m"), home, filepath.Join(home, "m")},
		{"no marker: cwd", filepath.Join(home, "plain", "sub"), home, filepath.Join(home, "plain", "sub")},
		{"stops at home", filepath.Join(home, "plain"), home, filepath.Join(home, "plain")},
		{"stops at home with a trailing slash", filepath.Join(home, "plain"), home + "/", filepath.Join(home, "plain")},
		{"unclean cwd", filepath.Join(home, "a", "b") + "/", home, filepath.Join(home, "a")},
		{"cwd is home", home, home, home},
		{"no cwd", "", home, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := FromEnv(func(k string) string {
				if k == "HOME" {
					return tt.home
				}
				return ""
			}, tt.cwd, "linux")
			if got.Project != tt.want {
				t.Errorf("Project: got %q, want %q", got.Project, tt.want)
			}
		})
	}
}

func TestSources(t *testing.T) {
	d := newDirs(t)
	p := pathsOf(d)
	tests := []struct {
		name string
		dirs Dirs
		want []Source
	}{
		{
			name: "all six",
			dirs: d,
			want: []Source{
				{Kind: KindShared, Path: p.shared},
				{Kind: KindAgents, Path: p.agents},
				{Kind: KindAgents, Path: p.agentsNested},
				{Kind: KindUser, Path: p.user},
				{Kind: KindProjectShared, Path: p.projectShared},
				{Kind: KindProject, Path: p.project},
				{Kind: KindExplicit, Path: p.explicit},
			},
		},
		{
			name: "no project, no explicit file, XDG_CONFIG_HOME set",
			dirs: Dirs{Home: d.Home, ConfigHome: "/xdg"},
			want: []Source{
				{Kind: KindShared, Path: "/xdg/mcp/mcp.json"},
				{Kind: KindAgents, Path: p.agents},
				{Kind: KindAgents, Path: p.agentsNested},
				{Kind: KindUser, Path: "/xdg/switchboard/config.json"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.dirs.Sources()); diff != "" {
				t.Errorf("Sources (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSourceKinds(t *testing.T) {
	tests := []struct {
		kind             Kind
		ours, inProjects bool
	}{
		{KindImport, false, false},
		{KindShared, false, false},
		{KindAgents, false, false},
		{KindUser, true, false},
		{KindProjectShared, false, true},
		{KindProject, true, true},
		{KindExplicit, true, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			s := Source{Kind: tt.kind}
			if got := s.Ours(); got != tt.ours {
				t.Errorf("Ours: got %v, want %v", got, tt.ours)
			}
			if got := s.InProject(); got != tt.inProjects {
				t.Errorf("InProject: got %v, want %v", got, tt.inProjects)
			}
		})
	}
}

func TestProblemError(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{File: "/c.json", Message: "m"}, "/c.json: m"},
		{Problem{File: "/c.json", Line: 3, Col: 7, Message: "m"}, "/c.json:3:7: m"},
		{Problem{File: "/c.json", Line: 3, Col: 7, Path: "mcpServers.x", Message: "m"}, "/c.json:3:7: mcpServers.x: m"},
	}
	for _, tt := range tests {
		if got := tt.p.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestUsable(t *testing.T) {
	d := newDirs(t)
	p := pathsOf(d)
	writeFile(t, p.user, `{"mcpServers": {
		"on": {"command": "on"},
		"off": {"command": "off", "disabled": true}
	}}`)
	c := Load(d)
	noErrors(t, c)
	if got, want := c.Names(), []string{"on"}; !cmp.Equal(got, want) {
		t.Errorf("Names: got %v, want %v", got, want)
	}
	tests := []struct {
		name    string
		want    error  // nil for usable
		message string // in the error
	}{
		{"on", nil, ""},
		{"off", ErrDisabled, "hint: switchboard enable off"},
		{"nope", ErrUnknownServer, "configured servers are on"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := c.Usable(tt.name)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("Usable: got error %v, want %v", err, tt.want)
			}
			if err != nil && !strings.Contains(err.Error(), tt.message) {
				t.Errorf("Usable: got %q, want it to contain %q", err, tt.message)
			}
			if err == nil && s.Name != tt.name {
				t.Errorf("Usable: got server %q, want %q", s.Name, tt.name)
			}
		})
	}

	empty := Load(newDirs(t))
	if _, err := empty.Usable("x"); !errors.Is(err, ErrUnknownServer) || !strings.Contains(err.Error(), "hint: switchboard add") {
		t.Errorf("Usable with no servers: got %v, want ErrUnknownServer with a hint", err)
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"", "", true},
		{"", "a", false},
		{"*", "", true},
		{"*", "anything/with/slashes", true},
		{"get_*", "get_issue", true},
		{"get_*", "list_issues", false},
		{"*_issue", "get_issue", true},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"?", "é", true}, // one character, two bytes
		{"??", "é", false},
		{"a?c", "abc", true},
		{"a**", "a", true},
		{"exact", "exact", true},
		{"exact", "exactly", false},
	}
	for _, tt := range tests {
		if got := Glob(tt.pattern, tt.name); got != tt.want {
			t.Errorf("Glob(%q, %q): got %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestServerTools(t *testing.T) {
	s := &Server{
		IncludeTools:   []string{"get_*", "search"},
		ExcludeTools:   []string{"get_secret*"},
		DirectTools:    DirectTools{Names: []string{"search"}},
		SearchKeywords: map[string][]string{"get_*": {"fetch", "read"}, "get_issue": {"ticket", "read"}},
	}
	tests := []struct {
		tool     string
		allowed  bool
		direct   bool
		keywords []string
	}{
		{"get_issue", true, false, []string{"fetch", "read", "ticket"}},
		{"get_secret_key", false, false, []string{"fetch", "read"}},
		{"search", true, true, nil},
		{"delete_repo", false, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			if got := s.ToolAllowed(tt.tool); got != tt.allowed {
				t.Errorf("ToolAllowed: got %v, want %v", got, tt.allowed)
			}
			if got := s.Direct(tt.tool); got != tt.direct {
				t.Errorf("Direct: got %v, want %v", got, tt.direct)
			}
			if diff := cmp.Diff(tt.keywords, s.Keywords(tt.tool)); diff != "" {
				t.Errorf("Keywords (-want +got):\n%s", diff)
			}
		})
	}
	all := &Server{DirectTools: DirectTools{All: true}}
	if !all.Direct("x") || !all.DirectTools.Set() || (DirectTools{}).Set() {
		t.Errorf("DirectTools{All: true}: got Direct %v, Set %v; zero Set %v; want true, true, false",
			all.Direct("x"), all.DirectTools.Set(), (DirectTools{}).Set())
	}
}

func TestServerTarget(t *testing.T) {
	tests := []struct {
		s          Server
		target, sv string
	}{
		{
			Server{Name: "fs", Type: TransportStdio, Command: "npx", Args: []string{"-y", "server-fs"}},
			"npx -y server-fs", "fs: stdio npx -y server-fs",
		},
		{
			Server{Name: "web", Type: TransportHTTP, URL: "https://user:pw@example.com/mcp?key=abc#frag"},
			"https://…@example.com/mcp?…", "web: http https://…@example.com/mcp?…",
		},
		{
			Server{Name: "old", Type: TransportSSE, URL: "https://example.com/sse"},
			"https://example.com/sse", "old: sse https://example.com/sse",
		},
		{
			// An @ in the path is not user info.
			Server{Name: "p", Type: TransportHTTP, URL: "https://example.com/@me"},
			"https://example.com/@me", "p: http https://example.com/@me",
		},
	}
	for _, tt := range tests {
		t.Run(tt.s.Name, func(t *testing.T) {
			if got := tt.s.Target(); got != tt.target {
				t.Errorf("Target: got %q, want %q", got, tt.target)
			}
			if got := tt.s.String(); got != tt.sv {
				t.Errorf("String: got %q, want %q", got, tt.sv)
			}
		})
	}
}

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"github", true},
		{"my-server_2", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"", false},
		{"has space", false},
		{"dot.name", false},
		{"slash/name", false},
		{"ünï", false},
		{"name\n", false},
	}
	for _, tt := range tests {
		if got := ValidName(tt.name); got != tt.want {
			t.Errorf("ValidName(%q): got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// FuzzValidName checks ValidName's loop against the regular expression it
// stands for.
func FuzzValidName(f *testing.F) {
	for _, s := range []string{"github", "my-server_2", strings.Repeat("a", 65), "", "a b", "name\n", "ünï"} {
		f.Add(s)
	}
	re := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidName(s), re.MatchString(s); got != want {
			t.Errorf("ValidName(%q) = %v, the expression says %v", s, got, want)
		}
	})
}
