package hosts

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

const (
	setupCommand = "/usr/local/bin/switchboard"
	setupURL     = "http://127.0.0.1:8931/mcp"
)

// setupNow is the time of every write in these tests, and setupBackup the
// suffix of the backups made then.
var setupNow = time.Date(2026, 11, 30, 12, 34, 56, 0, time.FixedZone("CET", 3600))

const setupBackup = ".switchboard-backup-20261130T113456Z"

// setupFiles is where each host's file lives on Linux, under the home.
var setupFiles = map[string]string{
	"claude-code":    claudeCodeFile,
	"claude-desktop": claudeDesktopLinux,
	"cursor":         cursorFile,
	"vscode":         vscodeLinux,
	"windsurf":       windsurfFile,
	"codex":          codexFile,
	"opencode":       opencodeJSON,
	"gemini":         geminiFile,
}

func TestSetupHostsAreImportHosts(t *testing.T) {
	var names []string
	for h := range setupHosts {
		names = append(names, h)
	}
	sort.Strings(names)
	if diff := cmp.Diff(Names(), names); diff != "" {
		t.Errorf("setup hosts (-import hosts +setup hosts):\n%s", diff)
	}
}

func TestSetupSnippets(t *testing.T) {
	tests := []struct {
		host, url string
		key       string
		snippet   string
		command   string // the host's own command, shell words joined by spaces; "" for none
	}{
		{host: "claude-code", key: "mcpServers", snippet: `{
  "mcpServers": {
    "switchboard": {
      "type": "stdio",
      "command": "/usr/local/bin/switchboard",
      "args": [
        "serve"
      ],
      "env": {}
    }
  }
}
`, command: "claude mcp add --scope user --transport stdio switchboard -- /usr/local/bin/switchboard serve"},
		{host: "claude-code", url: setupURL, key: "mcpServers", snippet: `{
  "mcpServers": {
    "switchboard": {
      "type": "http",
      "url": "http://127.0.0.1:8931/mcp"
    }
  }
}
`, command: "claude mcp add --scope user --transport http switchboard http://127.0.0.1:8931/mcp"},
		{host: "claude-desktop", key: "mcpServers", snippet: `{
  "mcpServers": {
    "switchboard": {
      "command": "/usr/local/bin/switchboard",
      "args": [
        "serve"
      ]
    }
  }
}
`},
		{host: "cursor", key: "mcpServers", snippet: `{
  "mcpServers": {
    "switchboard": {
      "type": "stdio",
      "command": "/usr/local/bin/switchboard",
      "args": [
        "serve"
      ]
    }
  }
}
`},
		{host: "cursor", url: setupURL, key: "mcpServers", snippet: `{
  "mcpServers": {
    "switchboard": {
      "url": "http://127.0.0.1:8931/mcp"
    }
  }
}
`},
		{host: "vscode", key: "servers", snippet: `{
  "servers": {
    "switchboard": {
      "type": "stdio",
      "command": "/usr/local/bin/switchboard",
      "args": [
        "serve"
      ]
    }
  }
}
`, command: `code --add-mcp {"name":"switchboard","type":"stdio","command":"/usr/local/bin/switchboard","args":["serve"]}`},
		{host: "vscode", url: setupURL, key: "servers", snippet: `{
  "servers": {
    "switchboard": {
      "type": "http",
      "url": "http://127.0.0.1:8931/mcp"
    }
  }
}
`, command: `code --add-mcp {"name":"switchboard","type":"http","url":"http://127.0.0.1:8931/mcp"}`},
		{host: "windsurf", key: "mcpServers", snippet: `{
  "mcpServers": {
    "switchboard": {
      "command": "/usr/local/bin/switchboard",
      "args": [
        "serve"
      ]
    }
  }
}
`},
		{host: "windsurf", url: setupURL, key: "mcpServers", snippet: `{
  "mcpServers": {
    "switchboard": {
      "serverUrl": "http://127.0.0.1:8931/mcp"
    }
  }
}
`},
		{host: "codex", key: "mcp_servers", snippet: `[mcp_servers.switchboard]
command = "/usr/local/bin/switchboard"
args = ["serve"]
`, command: "codex mcp add switchboard -- /usr/local/bin/switchboard serve"},
		{host: "codex", url: setupURL, key: "mcp_servers", snippet: `[mcp_servers.switchboard]
url = "http://127.0.0.1:8931/mcp"
`, command: "codex mcp add switchboard --url http://127.0.0.1:8931/mcp"},
		{host: "opencode", key: "mcp", snippet: `{
  "mcp": {
    "switchboard": {
      "type": "local",
      "command": [
        "/usr/local/bin/switchboard",
        "serve"
      ]
    }
  }
}
`, command: "opencode mcp add switchboard --global -- /usr/local/bin/switchboard serve"},
		{host: "opencode", url: setupURL, key: "mcp", snippet: `{
  "mcp": {
    "switchboard": {
      "type": "remote",
      "url": "http://127.0.0.1:8931/mcp",
      "oauth": false
    }
  }
}
`, command: "opencode mcp add switchboard --global --url http://127.0.0.1:8931/mcp"},
		{host: "gemini", key: "mcpServers", snippet: `{
  "mcpServers": {
    "switchboard": {
      "command": "/usr/local/bin/switchboard",
      "args": [
        "serve"
      ]
    }
  }
}
`, command: "gemini mcp add --scope user switchboard /usr/local/bin/switchboard serve"},
		{host: "gemini", url: setupURL, key: "mcpServers", snippet: `{
  "mcpServers": {
    "switchboard": {
      "httpUrl": "http://127.0.0.1:8931/mcp"
    }
  }
}
`, command: "gemini mcp add --scope user --transport http switchboard http://127.0.0.1:8931/mcp"},
	}
	for _, tt := range tests {
		name := tt.host + "/stdio"
		if tt.url != "" {
			name = tt.host + "/http"
		}
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			s, err := PlanSetup(Dirs{Home: home}, tt.host, SetupOptions{Command: setupCommand, URL: tt.url})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.snippet, s.Snippet); diff != "" {
				t.Errorf("snippet (-want +got):\n%s", diff)
			}
			if got := strings.Join(s.HostCommand, " "); got != tt.command {
				t.Errorf("host command: got %q, want %q", got, tt.command)
			}
			want := filepath.Join(home, filepath.FromSlash(setupFiles[tt.host]))
			if s.Host != tt.host || s.File != want || s.Key != tt.key || s.Name != "switchboard" || s.State != SetupNoFile || s.Exists() {
				t.Errorf("got host %q, file %s, key %s, name %q, state %s, exists %v; want %q, %s, %s, \"switchboard\", no-file, false",
					s.Host, s.File, s.Key, s.Name, s.State, s.Exists(), tt.host, want, tt.key)
			}
		})
	}
}

func TestSetupName(t *testing.T) {
	s, err := PlanSetup(Dirs{Home: t.TempDir()}, "codex", SetupOptions{Name: "gateway", Command: `C:\Program Files\sb "x".exe`})
	if err != nil {
		t.Fatal(err)
	}
	const want = `[mcp_servers.gateway]
command = "C:\\Program Files\\sb \"x\".exe"
args = ["serve"]
`
	if s.Snippet != want {
		t.Errorf("snippet: got %q, want %q", s.Snippet, want)
	}
	var v map[string]map[string]map[string]any
	if _, err := toml.Decode(s.Snippet, &v); err != nil || v["mcp_servers"]["gateway"]["command"] != `C:\Program Files\sb "x".exe` {
		t.Errorf("snippet decodes to %v, %v", v, err)
	}
}

func TestSetupPlanErrors(t *testing.T) {
	tests := []struct {
		host string
		opts SetupOptions
		want string
	}{
		{"claude-desktop", SetupOptions{URL: setupURL}, "Claude Desktop cannot reach a server by URL from its configuration file"},
		{"netscape", SetupOptions{Command: setupCommand}, `unknown host "netscape"`},
		{"cursor", SetupOptions{Command: setupCommand, Name: "no spaces"}, `invalid server name "no spaces"`},
		{"cursor", SetupOptions{URL: "127.0.0.1:8931"}, `invalid URL "127.0.0.1:8931"`},
		{"cursor", SetupOptions{URL: "ftp://h/mcp"}, `invalid URL`},
		{"cursor", SetupOptions{}, "no switchboard command"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			home := t.TempDir()
			_, err := PlanSetup(Dirs{Home: home}, tt.host, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
			if got := listTree(t, home); len(got) != 0 {
				t.Errorf("files written: %v", got)
			}
		})
	}
}

func TestSetupPaths(t *testing.T) {
	tests := []struct {
		host, goos string
		dirs       Dirs // Home is filled in
		want       string
	}{
		{"claude-desktop", "linux", Dirs{}, claudeDesktopLinux},
		{"claude-desktop", "darwin", Dirs{}, claudeDesktopMac},
		{"vscode", "linux", Dirs{}, vscodeLinux},
		{"vscode", "darwin", Dirs{}, vscodeMac},
		{"vscode", "linux", Dirs{ConfigHome: "xdg"}, "xdg/Code/User/mcp.json"},
		{"claude-code", "darwin", Dirs{}, claudeCodeFile},
		{"cursor", "darwin", Dirs{}, cursorFile},
		{"windsurf", "darwin", Dirs{}, windsurfFile},
		{"gemini", "darwin", Dirs{}, geminiFile},
		{"codex", "darwin", Dirs{}, codexFile},
		{"codex", "linux", Dirs{CodexHome: "ch"}, "ch/config.toml"},
		{"opencode", "darwin", Dirs{}, opencodeJSON}, // ~/.config on macOS too
		{"opencode", "linux", Dirs{ConfigHome: "xdg"}, "xdg/opencode/opencode.json"},
	}
	for _, tt := range tests {
		t.Run(tt.host+"/"+tt.goos+"/"+tt.want, func(t *testing.T) {
			home := t.TempDir()
			d := tt.dirs
			d.Home, d.GOOS = home, tt.goos
			for _, p := range []*string{&d.ConfigHome, &d.CodexHome} {
				if *p != "" {
					*p = filepath.Join(home, *p)
				}
			}
			s, err := PlanSetup(d, tt.host, SetupOptions{Command: setupCommand})
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(home, filepath.FromSlash(tt.want)); s.File != want {
				t.Errorf("file: got %s, want %s", s.File, want)
			}
		})
	}
}

// setupFixture reads testdata/setup/HOST.txtar: the sections "before" and
// "after" hold a realistic file of the host before and after a write.
func setupFixture(t *testing.T, host string) (before, after string) {
	t.Helper()
	a, err := txtar.ParseFile(filepath.Join("testdata", "setup", host+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, f := range a.Files {
		sections[f.Name] = string(f.Data)
	}
	if sections["before"] == "" || sections["after"] == "" {
		t.Fatalf("%s.txtar: want the sections before and after", host)
	}
	return sections["before"], sections["after"]
}

// setupFile is a host's file under a fake home.
type setupFile struct {
	t    *testing.T
	host string
	d    Dirs
	path string
}

func newSetupFile(t *testing.T, host string) *setupFile {
	t.Helper()
	home := t.TempDir()
	rel := setupFiles[host]
	if host == "opencode" {
		rel = opencodeJSONC
	}
	return &setupFile{t: t, host: host, d: Dirs{Home: home}, path: filepath.Join(home, filepath.FromSlash(rel))}
}

func (f *setupFile) plan(opts SetupOptions) *Setup {
	f.t.Helper()
	if opts.Command == "" && opts.URL == "" {
		opts.Command = setupCommand
	}
	s, err := PlanSetup(f.d, f.host, opts)
	if err != nil {
		f.t.Fatal(err)
	}
	if s.File != f.path {
		f.t.Fatalf("file: got %s, want %s", s.File, f.path)
	}
	return s
}

// write plans and writes, and checks what Write returns.
func (f *setupFile) write(opts SetupOptions, force, wantWritten bool, wantBackup string) *Setup {
	f.t.Helper()
	s := f.plan(opts)
	written, backup, err := s.Write(force, setupNow)
	if err != nil {
		f.t.Fatalf("Write: %v", err)
	}
	if written != wantWritten || backup != wantBackup {
		f.t.Fatalf("Write: got written %v, backup %q; want %v, %q", written, backup, wantWritten, wantBackup)
	}
	return s
}

// dir lists the names in the file's directory: the file and its backups.
func (f *setupFile) dir() []string {
	f.t.Helper()
	if f.host == "claude-code" { // the home itself
		return dirNames(f.t, f.d.Home)
	}
	return dirNames(f.t, filepath.Dir(f.path))
}

func TestSetupWriteCreates(t *testing.T) {
	for _, host := range Names() {
		t.Run(host, func(t *testing.T) {
			f := newSetupFile(t, host)
			f.path = filepath.Join(f.d.Home, filepath.FromSlash(setupFiles[host])) // opencode.json by default
			s := f.write(SetupOptions{}, false, true, "")
			if got := readString(t, f.path); got != s.Snippet {
				t.Errorf("file: got %q, want the snippet %q", got, s.Snippet)
			}
			if got := fileMode(t, f.path); got != 0o600 {
				t.Errorf("file mode: got %v, want 0600", got)
			}
			if dir := filepath.Dir(f.path); dir != f.d.Home {
				if got := fileMode(t, dir); got != 0o700 {
					t.Errorf("directory mode: got %v, want 0700", got)
				}
			}
			want := []string{filepath.Base(f.path)}
			if got := f.dir(); !cmp.Equal(got, want) {
				t.Errorf("directory: got %v, want %v", got, want)
			}
			// The second time, it is set up already.
			if s := f.write(SetupOptions{}, false, false, ""); s.State != SetupSame || !s.Exists() {
				t.Errorf("second plan: got state %s, want same", s.State)
			}
			if got := f.dir(); !cmp.Equal(got, want) {
				t.Errorf("directory after the second write: got %v, want %v", got, want)
			}
		})
	}
}

func TestSetupWriteExisting(t *testing.T) {
	for _, host := range Names() {
		t.Run(host, func(t *testing.T) {
			before, after := setupFixture(t, host)
			f := newSetupFile(t, host)
			writeFile(t, f.path, before)
			if err := os.Chmod(f.path, 0o640); err != nil {
				t.Fatal(err)
			}
			if s := f.plan(SetupOptions{}); s.State != SetupAbsent || s.Exists() {
				t.Fatalf("plan: got state %s (%v), want absent", s.State, s.Err)
			}
			backup := f.path + setupBackup
			f.write(SetupOptions{}, false, true, backup)
			if diff := cmp.Diff(after, readString(t, f.path)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			if got := readString(t, backup); got != before {
				t.Errorf("backup: got %q, want the file as it was", got)
			}
			for _, p := range []string{f.path, backup} {
				if got := fileMode(t, p); got != 0o640 {
					t.Errorf("%s: mode %v, want 0640 kept", filepath.Base(p), got)
				}
			}
			want := []string{filepath.Base(f.path), filepath.Base(backup)}
			if host == "claude-code" {
				want = []string{".claude.json", ".claude.json" + setupBackup}
			}
			if got := f.dir(); !cmp.Equal(got, want) {
				t.Errorf("directory: got %v, want %v", got, want)
			}

			// The importer reads what setup wrote (config's import then
			// knows it for Switchboard itself, and skips it).
			files, err := Read(f.d, host)
			if err != nil {
				t.Fatal(err)
			}
			var mount map[string]any
			for _, file := range files {
				for _, e := range file.Entries {
					if e.Name == "switchboard" && !e.Skip {
						mount = e.Def
					}
				}
			}
			if mount["command"] != setupCommand || !cmp.Equal(mount["args"], []any{"serve"}) {
				t.Errorf("read after setup: got %v, want the entry setup wrote", mount)
			}

			// Idempotent: no second write, no second backup.
			if s := f.write(SetupOptions{}, false, false, ""); s.State != SetupSame {
				t.Errorf("second plan: got state %s, want same", s.State)
			}
			if got := readString(t, f.path); got != after {
				t.Errorf("file changed by the second write")
			}
			if got := f.dir(); !cmp.Equal(got, want) {
				t.Errorf("directory after the second write: got %v, want %v", got, want)
			}
		})
	}
}

// setupConflicts holds, per host, a file whose "switchboard" is something
// else, and one that does not parse.
var setupConflicts = map[string][2]string{
	"claude-code":    {`{"mcpServers": {"switchboard": {"type": "stdio", "command": "switchboard", "args": ["serve"], "env": {}}}}`, `{"mcpServers": {`},
	"claude-desktop": {`{"mcpServers": {"switchboard": {"command": "/opt/old/switchboard", "args": ["serve"]}}}`, `{"mcpServers": {"a": {"command": "x",}}`},
	"cursor":         {`{"mcpServers": {"switchboard": {"url": "http://127.0.0.1:1/mcp"}}}`, "{\"mcpServers\": {\"a\": {\"command\": \"x\n\"}}}"},
	"vscode":         {"{\n\t// mine\n\t\"servers\": {\"switchboard\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:1/mcp\"}},\n}\n", "{\n\t\"servers\": {\n"},
	"windsurf":       {`{"mcpServers": {"switchboard": {"command": "switchboard", "args": ["serve", "--quiet"]}}}`, `mcpServers: {}`},
	"codex":          {"[mcp_servers.switchboard]\ncommand = \"switchboard\"\nargs = [\"serve\"]\n", "[mcp_servers.switchboard\ncommand = \"x\"\n"},
	"opencode":       {"{\n  // V1\n  \"mcp\": {\"switchboard\": {\"type\": \"local\", \"command\": [\"switchboard\", \"serve\"], \"enabled\": false}},\n}\n", `{"mcp": }`},
	"gemini":         {`{"mcpServers": {"switchboard": {"httpUrl": "http://127.0.0.1:1/mcp", "trust": true}}}`, `{"mcpServers": "none"}`},
}

func TestSetupRefuses(t *testing.T) {
	for _, host := range Names() {
		for i, what := range []string{"conflict", "invalid"} {
			t.Run(host+"/"+what, func(t *testing.T) {
				content := setupConflicts[host][i]
				f := newSetupFile(t, host)
				writeFile(t, f.path, content)
				s := f.plan(SetupOptions{})
				wantState, wantErr := SetupDifferent, "already defines \"switchboard\" otherwise (hint: remove it from the file, or pass --force"
				if what == "invalid" {
					wantState, wantErr = SetupInvalid, "; not changing it (hint: fix it, or add the snippet by hand)"
				}
				if s.State != wantState || s.Exists() != (what == "conflict") {
					t.Fatalf("plan: got state %s (%v), want %s", s.State, s.Err, wantState)
				}
				written, backup, err := s.Write(false, setupNow)
				if err == nil || !strings.Contains(err.Error(), wantErr) || written || backup != "" {
					t.Errorf("Write: got %v, %q, %v; want an error containing %q", written, backup, err, wantErr)
				}
				if what == "invalid" {
					// Not even with force.
					if _, _, err := s.Write(true, setupNow); err == nil {
						t.Errorf("Write with force: got no error")
					}
				}
				if got := readString(t, f.path); got != content {
					t.Errorf("file changed: got %q, want %q", got, content)
				}
				if got := f.dir(); !cmp.Equal(got, []string{filepath.Base(f.path)}) {
					t.Errorf("directory: got %v, want only the file", got)
				}
			})
		}
	}
}

// An unparseable file is reported without quoting its text, which may hold
// a secret.
func TestSetupInvalidHidesText(t *testing.T) {
	f := newSetupFile(t, "cursor")
	writeFile(t, f.path, "{\"mcpServers\": {\"a\": {\"env\": {\"TOKEN\": \"sk-live-0123\n456\"}}}}")
	s := f.plan(SetupOptions{})
	if s.State != SetupInvalid || s.Err == nil || strings.Contains(s.Err.Error(), "sk-live") || !strings.Contains(s.Err.Error(), f.path+":1:") {
		t.Errorf("got state %s, error %v; want invalid, with a position and without the text", s.State, s.Err)
	}
}

func TestSetupForceJSON(t *testing.T) {
	f := newSetupFile(t, "vscode")
	before := setupConflicts["vscode"][0]
	writeFile(t, f.path, before)
	backup := f.path + setupBackup
	f.write(SetupOptions{}, true, true, backup)
	// The entry is written anew, compact like the object that holds it.
	const want = "{\n\t// mine\n\t\"servers\": {\"switchboard\": {\"type\":\"stdio\",\"command\":\"/usr/local/bin/switchboard\",\"args\":[\"serve\"]}},\n}\n"
	if diff := cmp.Diff(want, readString(t, f.path)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	if got := readString(t, backup); got != before {
		t.Errorf("backup: got %q, want %q", got, before)
	}
}

func TestSetupCodex(t *testing.T) {
	tests := []struct {
		name   string
		before string
		url    string
		after  string
	}{
		{name: "append without a final line break", before: "model = \"o3\"", after: `model = "o3"

[mcp_servers.switchboard]
command = "/usr/local/bin/switchboard"
args = ["serve"]
`},
		{name: "append after a blank line", before: "model = \"o3\"\n\n", url: setupURL, after: `model = "o3"

[mcp_servers.switchboard]
url = "http://127.0.0.1:8931/mcp"
`},
		{name: "replace with its sub-tables, keep what follows", url: setupURL, before: `model = "o3"

[mcp_servers.switchboard] # mine
command = "switchboard"
args = [
  "serve",
  "--log", "[debug]",
]
description = """
[mcp_servers.other]
"""

[mcp_servers.switchboard.env]
LOG = "1"
# The next one is for work.

[mcp_servers.work]
command = "work-mcp"

[mcp_servers.switchboard.tools.search]
approval = "never"
`, after: `model = "o3"

[mcp_servers.switchboard]
url = "http://127.0.0.1:8931/mcp"
# The next one is for work.

[mcp_servers.work]
command = "work-mcp"
`},
		{name: "replace a quoted header at the end", before: `[mcp_servers]

[ mcp_servers . "switchboard" ]
command = 'switchboard'`, after: `[mcp_servers]

[mcp_servers.switchboard]
command = "/usr/local/bin/switchboard"
args = ["serve"]
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newSetupFile(t, "codex")
			writeFile(t, f.path, tt.before)
			force := strings.Contains(tt.name, "replace")
			f.write(SetupOptions{URL: tt.url}, force, true, f.path+setupBackup)
			if diff := cmp.Diff(tt.after, readString(t, f.path)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			if got := readString(t, f.path+setupBackup); got != tt.before {
				t.Errorf("backup: got %q, want %q", got, tt.before)
			}
		})
	}
}

// A definition that is not its own [mcp_servers.NAME] table is not
// rewritten, even with force.
func TestSetupCodexRefusesOtherForms(t *testing.T) {
	for _, before := range []string{
		"[mcp_servers]\nswitchboard = { command = \"switchboard\" }\n",
		"mcp_servers.switchboard.command = \"switchboard\"\n",
		"mcp_servers = { switchboard = { command = \"switchboard\" } }\n",
		"[mcp_servers.switchboard.env]\nA = \"1\"\n",
	} {
		t.Run(before, func(t *testing.T) {
			f := newSetupFile(t, "codex")
			writeFile(t, f.path, before)
			s := f.plan(SetupOptions{})
			if s.State != SetupDifferent {
				t.Fatalf("plan: got state %s (%v), want different", s.State, s.Err)
			}
			_, _, err := s.Write(true, setupNow)
			if err == nil || !strings.Contains(err.Error(), "remove it by hand") {
				t.Errorf("Write: got %v, want an error saying to remove it by hand", err)
			}
			if got := readString(t, f.path); got != before {
				t.Errorf("file changed: got %q", got)
			}
			if got := f.dir(); !cmp.Equal(got, []string{"config.toml"}) {
				t.Errorf("directory: got %v, want only config.toml", got)
			}
		})
	}
}

// Appending a table is refused where TOML does not allow it: mcp_servers
// is an inline table.
func TestSetupCodexInlineServers(t *testing.T) {
	f := newSetupFile(t, "codex")
	const before = "mcp_servers = { other = { command = \"x\" } }\n"
	writeFile(t, f.path, before)
	_, _, err := f.plan(SetupOptions{}).Write(false, setupNow)
	if err == nil || !strings.Contains(err.Error(), "mcp_servers is an inline table") {
		t.Errorf("Write: got %v, want an error about the inline table", err)
	}
	if got := readString(t, f.path); got != before {
		t.Errorf("file changed: got %q", got)
	}
}

func TestSetupOpencodeFiles(t *testing.T) {
	v2 := "{\n  \"mcp\": {\n    \"servers\": {\n      \"a\": {\"type\": \"local\", \"command\": [\"a\"]}\n    }\n  }\n}\n"
	v1 := "{\"mcp\": {\"a\": {\"type\": \"local\", \"command\": [\"a\"]}}}\n"
	mine := "{\"mcp\": {\"switchboard\": {\"type\": \"local\", \"command\": [\"switchboard\", \"serve\"]}}}\n"
	tests := []struct {
		name     string
		files    map[string]string // name in the opencode directory → content
		wantFile string
		wantKey  string
		state    SetupState
	}{
		{"none", nil, "opencode.json", "mcp", SetupNoFile},
		{"jsonc only", map[string]string{"opencode.jsonc": v1}, "opencode.jsonc", "mcp", SetupAbsent},
		{"both", map[string]string{"opencode.json": v1, "opencode.jsonc": v2}, "opencode.json", "mcp", SetupAbsent},
		{"both, jsonc defines it", map[string]string{"opencode.json": v1, "opencode.jsonc": mine}, "opencode.jsonc", "mcp", SetupDifferent},
		{"v2", map[string]string{"opencode.json": v2}, "opencode.json", "mcp.servers", SetupAbsent},
		{"a v1 server named servers", map[string]string{"opencode.json": `{"mcp": {"servers": {"type": "remote", "url": "https://h/mcp"}}}`}, "opencode.json", "mcp", SetupAbsent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			for name, content := range tt.files {
				writeFile(t, filepath.Join(home, ".config", "opencode", name), content)
			}
			s, err := PlanSetup(Dirs{Home: home}, "opencode", SetupOptions{Command: setupCommand})
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(s.File) != tt.wantFile || s.Key != tt.wantKey || s.State != tt.state {
				t.Errorf("got %s, key %s, state %s; want %s, %s, %s", filepath.Base(s.File), s.Key, s.State, tt.wantFile, tt.wantKey, tt.state)
			}
		})
	}

	// A V2 file gets a V2 entry.
	f := newSetupFile(t, "opencode")
	f.path = filepath.Join(f.d.Home, opencodeJSON)
	writeFile(t, f.path, v2)
	f.write(SetupOptions{URL: setupURL}, false, true, f.path+setupBackup)
	const want = `{
  "mcp": {
    "servers": {
      "a": {"type": "local", "command": ["a"]},
      "switchboard": {
        "type": "remote",
        "url": "http://127.0.0.1:8931/mcp",
        "oauth": false
      }
    }
  }
}
`
	if diff := cmp.Diff(want, readString(t, f.path)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
}

// A file that is a symbolic link, as dotfile managers make them, stays a
// link: the file it points to changes.
func TestSetupSymlink(t *testing.T) {
	f := newSetupFile(t, "gemini")
	real := filepath.Join(f.d.Home, "dotfiles", "gemini.json")
	writeFile(t, real, "{}\n")
	if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, f.path); err != nil {
		t.Fatal(err)
	}
	s := f.write(SetupOptions{}, false, true, f.path+setupBackup)
	if st, err := os.Lstat(f.path); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a link (%v)", f.path, err)
	}
	if got := readString(t, real); got != s.Snippet {
		t.Errorf("linked file: got %q, want the snippet %q", got, s.Snippet)
	}
	if got := readString(t, f.path+setupBackup); got != "{}\n" {
		t.Errorf("backup: got %q", got)
	}
}

// An empty file holds nothing yet; it is backed up all the same.
func TestSetupEmptyFile(t *testing.T) {
	f := newSetupFile(t, "cursor")
	writeFile(t, f.path, "\n")
	s := f.write(SetupOptions{}, false, true, f.path+setupBackup)
	if got := readString(t, f.path); got != s.Snippet {
		t.Errorf("file: got %q, want the snippet", got)
	}
}

// A file that changes between the plan and the write, as when the host
// itself writes it, is left alone.
func TestSetupFileChanged(t *testing.T) {
	for _, tt := range []struct {
		name, before, during string
	}{
		{"changed", "{}\n", "{\"mcpServers\": {}}\n"},
		{"appeared", "", "{}\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newSetupFile(t, "claude-code")
			if tt.before != "" {
				writeFile(t, f.path, tt.before)
			}
			s := f.plan(SetupOptions{})
			writeFile(t, f.path, tt.during)
			_, _, err := s.Write(false, setupNow)
			if err == nil || !strings.Contains(err.Error(), "it changed while setup ran") {
				t.Errorf("Write: got %v, want an error saying it changed", err)
			}
			if got := readString(t, f.path); got != tt.during {
				t.Errorf("file: got %q, want %q", got, tt.during)
			}
			if got := f.dir(); !cmp.Equal(got, []string{".claude.json"}) {
				t.Errorf("home: got %v, want only .claude.json", got)
			}
		})
	}
}

// Backups made within the same second do not replace one another.
func TestSetupBackupNames(t *testing.T) {
	f := newSetupFile(t, "windsurf")
	writeFile(t, f.path, "{}\n")
	f.write(SetupOptions{Name: "one"}, false, true, f.path+setupBackup)
	f.write(SetupOptions{Name: "two"}, false, true, f.path+setupBackup+"-2")
	if got := readString(t, f.path+setupBackup); got != "{}\n" {
		t.Errorf("first backup: got %q", got)
	}
	if got := readString(t, f.path+setupBackup+"-2"); !strings.Contains(got, `"one"`) || strings.Contains(got, `"two"`) {
		t.Errorf("second backup: got %q, want the file with one and without two", got)
	}
}

func TestSetupUnreadable(t *testing.T) {
	f := newSetupFile(t, "cursor")
	if err := os.MkdirAll(f.path, 0o755); err != nil { // a directory where the file should be
		t.Fatal(err)
	}
	s := f.plan(SetupOptions{})
	if s.State != SetupInvalid {
		t.Fatalf("plan: got state %s, want invalid", s.State)
	}
	if _, _, err := s.Write(false, setupNow); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Write: got %v, want an error saying it is a directory", err)
	}
}

func FuzzSetupCodex(f *testing.F) {
	for _, s := range []string{
		"", "a = 1", "[mcp_servers.switchboard]\ncommand = \"x\"\n", "[mcp_servers.switchboard.env]\n[x]\n",
		"[mcp_servers.switchboard]\nd = \"\"\"\n[x]\n\"\"\"\n[y]\n", "[mcp_servers.switchboard]\na = [\n[1],\n]\n# c\n[z]\n",
		"[ mcp_servers . 'switchboard' ] # c\nk = '''\n'''\n", "[[mcp_servers.switchboard.x]]\n", "x = \"\\\"[\"\n[mcp_servers.switchboard]",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		blocks := tomlBlocks([]byte(data))
		end := 0
		for _, b := range blocks {
			if b.start < end || b.end < b.start || b.end > len(data) || (b.start > 0 && data[b.start-1] != '\n') {
				t.Fatalf("block %+v after offset %d in %q: want ordered blocks, each from a line start", b, end, data)
			}
			end = b.end
		}
		home := t.TempDir()
		d := Dirs{Home: home}
		path := filepath.Join(home, ".codex", "config.toml")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := PlanSetup(d, "codex", SetupOptions{Command: setupCommand})
		if err != nil {
			t.Fatal(err)
		}
		written, _, err := s.Write(true, setupNow)
		got, rerr := os.ReadFile(path)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if !written {
			if string(got) != data {
				t.Fatalf("not written (%v), yet the file changed", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("written with an error: %v", err)
		}
		var root map[string]any
		if _, err := toml.Decode(string(got), &root); err != nil {
			t.Fatalf("result does not parse: %v\n%s", err, got)
		}
		if s2, err := PlanSetup(d, "codex", SetupOptions{Command: setupCommand}); err != nil || s2.State != SetupSame {
			t.Fatalf("after the write: state %v, %v; want same", s2.State, err)
		}
	})
}

// Where each host's file goes in a fake home directory.
const (
	claudeDesktopLinux = ".config/Claude/claude_desktop_config.json"
	claudeDesktopMac   = "Library/Application Support/Claude/claude_desktop_config.json"
	claudeCodeFile     = ".claude.json"
	cursorFile         = ".cursor/mcp.json"
	vscodeLinux        = ".config/Code/User/mcp.json"
	vscodeMac          = "Library/Application Support/Code/User/mcp.json"
	windsurfFile       = ".codeium/windsurf/mcp_config.json"
	codexFile          = ".codex/config.toml"
	opencodeJSON       = ".config/opencode/opencode.json"
	opencodeJSONC      = ".config/opencode/opencode.jsonc"
	geminiFile         = ".gemini/settings.json"
)

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

// fileMode returns the permission bits of path.
func fileMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// listTree lists the files under dir with their contents.
func listTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			out[path] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dirNames lists the names in dir: a write leaves no temporary file behind.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
