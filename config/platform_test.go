package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-mcp/switchboard/config/hosts"
)

// A machine of each platform, as its environment describes it.
var platformEnv = map[string]map[string]string{
	"linux":  {"HOME": "/home/me"},
	"darwin": {"HOME": "/Users/me"},
	"windows": {
		"USERPROFILE": `C:\Users\me`, "APPDATA": `C:\Users\me\AppData\Roaming`,
		"LOCALAPPDATA": `C:\Users\me\AppData\Local`,
		"HOME":         "/c/Users/me", // as Git Bash sets it: not what the hosts use
	},
}

func platformDirs(goos string, extra map[string]string) Dirs {
	env := platformEnv[goos]
	return FromEnv(func(k string) string {
		if v, ok := extra[k]; ok {
			return v
		}
		return env[k]
	}, "", goos)
}

// TestHostFilesPerPlatform: setup, and the importers through the same
// functions, find each host's user file where that host keeps it on each
// platform (HOSTS.md §1).
func TestHostFilesPerPlatform(t *testing.T) {
	want := map[string]map[string]string{
		"claude-desktop": {
			"linux":   "/home/me/.config/Claude/claude_desktop_config.json",
			"darwin":  "/Users/me/Library/Application Support/Claude/claude_desktop_config.json",
			"windows": `C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json`,
		},
		"claude-code": {"linux": "/home/me/.claude.json", "darwin": "/Users/me/.claude.json", "windows": `C:\Users\me\.claude.json`},
		"cursor":      {"linux": "/home/me/.cursor/mcp.json", "darwin": "/Users/me/.cursor/mcp.json", "windows": `C:\Users\me\.cursor\mcp.json`},
		"vscode": {
			"linux":   "/home/me/.config/Code/User/mcp.json",
			"darwin":  "/Users/me/Library/Application Support/Code/User/mcp.json",
			"windows": `C:\Users\me\AppData\Roaming\Code\User\mcp.json`,
		},
		"windsurf": {
			"linux":   "/home/me/.codeium/windsurf/mcp_config.json",
			"darwin":  "/Users/me/.codeium/windsurf/mcp_config.json",
			"windows": `C:\Users\me\.codeium\windsurf\mcp_config.json`,
		},
		"codex":    {"linux": "/home/me/.codex/config.toml", "darwin": "/Users/me/.codex/config.toml", "windows": `C:\Users\me\.codex\config.toml`},
		"opencode": {"linux": "/home/me/.config/opencode/opencode.json", "darwin": "/Users/me/.config/opencode/opencode.json", "windows": `C:\Users\me\.config\opencode\opencode.json`},
		"gemini":   {"linux": "/home/me/.gemini/settings.json", "darwin": "/Users/me/.gemini/settings.json", "windows": `C:\Users\me\.gemini\settings.json`},
	}
	if hosts := slices.Sorted(func(yield func(string) bool) {
		for h := range want {
			if !yield(h) {
				return
			}
		}
	}); !slices.Equal(hosts, HostNames()) {
		t.Fatalf("the test covers %v, but the hosts are %v", hosts, HostNames())
	}
	for _, host := range HostNames() {
		for _, goos := range []string{"linux", "darwin", "windows"} {
			t.Run(host+"/"+goos, func(t *testing.T) {
				s, err := hosts.PlanSetup(platformDirs(goos, nil).Hosts(), host, hosts.SetupOptions{Command: "switchboard"})
				if err != nil {
					t.Fatal(err)
				}
				if s.File != want[host][goos] {
					t.Errorf("file = %s, want %s", s.File, want[host][goos])
				}
			})
		}
	}
}

// TestHostFilesFromEnv: the variables that move a host's files on each
// platform.
func TestHostFilesFromEnv(t *testing.T) {
	tests := []struct {
		goos, host string
		env        map[string]string
		want       string
	}{
		{"windows", "vscode", map[string]string{"APPDATA": `D:\Roaming`}, `D:\Roaming\Code\User\mcp.json`},
		{"windows", "claude-desktop", map[string]string{"APPDATA": `\\srv\profiles\me\Roaming`}, `\\srv\profiles\me\Roaming\Claude\claude_desktop_config.json`},
		{"windows", "codex", map[string]string{"CODEX_HOME": `E:\codex`}, `E:\codex\config.toml`},
		{"windows", "opencode", map[string]string{"XDG_CONFIG_HOME": `E:\xdg`}, `E:\xdg\opencode\opencode.json`},
		// Without USERPROFILE, HOMEDRIVE and HOMEPATH; without APPDATA, its default under the home.
		{"windows", "cursor", map[string]string{"USERPROFILE": "", "HOMEDRIVE": "H:", "HOMEPATH": `\me`}, `H:\me\.cursor\mcp.json`},
		{"windows", "vscode", map[string]string{"APPDATA": ""}, `C:\Users\me\AppData\Roaming\Code\User\mcp.json`},
		{"linux", "vscode", map[string]string{"XDG_CONFIG_HOME": "/xdg"}, "/xdg/Code/User/mcp.json"},
		{"darwin", "vscode", map[string]string{"XDG_CONFIG_HOME": "/xdg"}, "/Users/me/Library/Application Support/Code/User/mcp.json"},
	}
	for _, tt := range tests {
		t.Run(tt.goos+"/"+tt.host+"/"+tt.want, func(t *testing.T) {
			s, err := hosts.PlanSetup(platformDirs(tt.goos, tt.env).Hosts(), tt.host, hosts.SetupOptions{Command: "switchboard"})
			if err != nil {
				t.Fatal(err)
			}
			if s.File != tt.want {
				t.Errorf("file = %s, want %s", s.File, tt.want)
			}
		})
	}
}

func TestFromEnvWindows(t *testing.T) {
	got := platformDirs("windows", nil)
	want := Dirs{
		Home: `C:\Users\me`, ConfigHome: `C:\Users\me\.config`, StateHome: `C:\Users\me\.local\state`,
		CacheHome: `C:\Users\me\.cache`, CodexHome: `C:\Users\me\.codex`, GOOS: "windows",
		AppData: `C:\Users\me\AppData\Roaming`, LocalAppData: `C:\Users\me\AppData\Local`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FromEnv on Windows (-want +got):\n%s", diff)
	}
	if f := got.UserFile(); f != `C:\Users\me\.config\switchboard\config.json` {
		t.Errorf("UserFile = %s", f)
	}
}

func TestJoinWindows(t *testing.T) {
	d := Dirs{GOOS: "windows"}
	for _, tt := range []struct {
		elem []string
		want string
	}{
		{[]string{`C:\Users\me`, ".config", "x"}, `C:\Users\me\.config\x`},
		{[]string{`C:\Users\me\`, `\AppData`, "", "Local"}, `C:\Users\me\AppData\Local`},
		{[]string{`C:/Users/me`, `a\..\b`}, `C:\Users\me\b`},
		{[]string{`\\server\share\me`, "x"}, `\\server\share\me\x`},
		{nil, ""},
	} {
		if got := d.join(tt.elem...); got != tt.want {
			t.Errorf("join(%q) = %q, want %q", tt.elem, got, tt.want)
		}
	}
}

// TestTrustIgnoresCaseWhereTheFileSystemDoes: a project trusted as one
// spelling of its directory is trusted under another that the file system
// takes for the same directory (Windows and macOS ignore case; a symbolic
// link stands in for that here), and only then.
func TestTrustIgnoresCaseWhereTheFileSystemDoes(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	proj := filepath.Join(root, "work", "proj")
	for _, dir := range []string{home, proj, filepath.Join(root, "work", "other")} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	mcp := []byte(`{"mcpServers": {"a": {"command": "true"}}}`)
	for _, dir := range []string{proj, filepath.Join(root, "work", "other")} {
		if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), mcp, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// PROJ is proj, as on a case-insensitive file system; Other is not other.
	if err := os.Symlink(proj, filepath.Join(root, "work", "PROJ")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "work", "Other"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "work", "Other", ".mcp.json"), mcp, 0o600); err != nil {
		t.Fatal(err)
	}
	at := func(dir string) Dirs { return Dirs{Home: home, Project: dir} }
	if _, err := Trust(at(proj), time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := Trust(at(filepath.Join(root, "work", "other")), time.Now()); err != nil {
		t.Fatal(err)
	}
	if c := Load(at(filepath.Join(root, "work", "PROJ"))); !c.Project.Trusted {
		t.Errorf("PROJ, the same directory as the trusted proj, is not trusted")
	}
	if c := Load(at(filepath.Join(root, "work", "Other"))); c.Project.Trusted {
		t.Errorf("Other, a different directory from the trusted other, is trusted")
	}
	// Trusting it again under the other spelling keeps one entry.
	if _, err := Trust(at(filepath.Join(root, "work", "PROJ")), time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := len(readTrust(at(proj).withDefaults()).Projects); n != 2 {
		t.Errorf("the trust record holds %d projects, want 2 (proj once, other)", n)
	}
	if ok, err := Revoke(at(filepath.Join(root, "work", "PROJ"))); !ok || err != nil {
		t.Errorf("Revoke under the other spelling = %v, %v", ok, err)
	}
	if c := Load(at(proj)); c.Project.Trusted {
		t.Errorf("proj is still trusted after its revocation as PROJ")
	}
}

func TestHomeDir(t *testing.T) {
	for _, tt := range []struct {
		goos string
		env  map[string]string
		want string
	}{
		{"linux", map[string]string{"HOME": "/home/me", "USERPROFILE": `C:\x`}, "/home/me"},
		{"darwin", map[string]string{"HOME": "/Users/me"}, "/Users/me"},
		{"windows", map[string]string{"HOME": "/c/Users/me", "USERPROFILE": `C:\Users\me`}, `C:\Users\me`},
		{"windows", map[string]string{"HOMEDRIVE": "C:", "HOMEPATH": `\Users\me`}, `C:\Users\me`},
		{"windows", map[string]string{"HOME": `C:\Users\me`}, `C:\Users\me`},
	} {
		if got := HomeDir(tt.goos, func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("HomeDir(%s, %v) = %q, want %q", tt.goos, tt.env, got, tt.want)
		}
	}
}
