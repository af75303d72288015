package config

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Where the sample files in testdata/hosts go in a fake home directory.
const (
	claudeDesktopLinux = ".config/Claude/claude_desktop_config.json"
	claudeDesktopMac   = "Library/Application Support/Claude/claude_desktop_config.json"
	claudeCodeFile     = ".claude.json"
	cursorFile         = ".cursor/mcp.json"
	vscodeLinux        = ".config/Code/User/mcp.json"
	vscodeSettings     = ".config/Code/User/settings.json"
	vscodeMac          = "Library/Application Support/Code/User/mcp.json"
	windsurfFile       = ".codeium/windsurf/mcp_config.json"
	codexFile          = ".codex/config.toml"
	opencodeJSON       = ".config/opencode/opencode.json"
	opencodeJSONC      = ".config/opencode/opencode.jsonc"
	geminiFile         = ".gemini/settings.json"
)

// hostSample reads a file of testdata/hosts.
func hostSample(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "hosts", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hostHome writes files (path under home → content) into a new home.
func hostHome(t testing.TB, files map[string]string) string {
	t.Helper()
	home := t.TempDir()
	for rel, content := range files {
		path := filepath.Join(home, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// importedServer is the definition we expect from a host file: file and path are
// the host's, the name is the last element of path.
func importedServer(host, file, path string, s Server) *Server {
	s.Name = path[strings.LastIndexByte(path, '.')+1:]
	s.Source = Source{Kind: KindImport, Path: file, Host: host}
	s.Path = path
	s.Lifecycle = LifecycleLazy
	s.IdleTimeout = -1
	s.ProtocolVersion = "auto"
	return &s
}

// importWarning is a problem we expect in a host file.
func importWarning(file, path, server, message string) Problem {
	return Problem{Severity: SeverityWarning, File: file, Path: path, Server: server, Message: message}
}

// relativeImport rewrites the paths of an import relative to home.
func relativeImport(t *testing.T, home string, imp *Import) {
	t.Helper()
	rel := func(p string) string {
		r, err := filepath.Rel(home, p)
		if err != nil || strings.HasPrefix(r, "..") {
			t.Errorf("path %s is outside the fake home %s", p, home)
			return p
		}
		return filepath.ToSlash(r)
	}
	for i := range imp.Files {
		imp.Files[i] = rel(imp.Files[i])
	}
	for _, s := range imp.Servers {
		s.Source.Path = rel(s.Source.Path)
	}
	for i := range imp.Problems {
		imp.Problems[i].File = rel(imp.Problems[i].File)
	}
}

var importCmpOpts = cmp.Options{cmpopts.IgnoreUnexported(Server{}), cmpopts.EquateEmpty(), cmpopts.EquateErrors()}

const credentialImportHint = " looks like a credential and must be a reference such as ${%[1]s}, not a literal (the value is not shown); hint: switchboard import --from %[2]s --write --move-secrets moves it into the credential store (server skipped)"

func selfWarning(why string) string {
	return "skipped: " + why + ", and a gateway must not list itself"
}

func credentialImportWarning(host, file, path, server, key string) Problem {
	return importWarning(file, path, server, key+fmt.Sprintf(credentialImportHint, key, host))
}

type hostCase struct {
	name      string
	host      string
	goos      string
	codexHome string            // under the fake home; "" for the default
	files     map[string]string // path under the fake home → content
	secrets   []string          // literals that must appear in no warning
	wantFiles []string          // the host files Import.Files must list
	servers   []*Server
	problems  []Problem
}

func claudeDesktopCase(name, goos, file string) hostCase {
	const h = "claude-desktop"
	return hostCase{
		name: name, host: h, goos: goos,
		files:     map[string]string{file: "claude-desktop/claude_desktop_config.json"},
		secrets:   []string{"ghp_FAKEfakeFAKEfake0123456789abcdefABCD"},
		wantFiles: []string{file},
		servers: []*Server{
			importedServer(h, file, "mcpServers.filesystem", Server{Type: TransportStdio, Command: "npx",
				Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop", "/Users/me/Downloads"}}),
		},
		problems: []Problem{
			credentialImportWarning(h, file, "mcpServers.github.env.GITHUB_PERSONAL_ACCESS_TOKEN", "github", "GITHUB_PERSONAL_ACCESS_TOKEN"),
			importWarning(file, "mcpServers.switchboard", "switchboard", selfWarning(`"/usr/local/bin/switchboard serve" starts Switchboard itself`)),
		},
	}
}

func vscodeCases() []hostCase {
	const h = "vscode"
	mcpJSON := func(file string) ([]*Server, []Problem) {
		return []*Server{
				importedServer(h, file, "servers.context7", Server{Type: TransportHTTP, URL: "https://mcp.context7.com/mcp"}),
				importedServer(h, file, "servers.github", Server{Type: TransportHTTP, URL: "https://api.githubcopilot.com/mcp/",
					Headers: map[string]string{"Authorization": "Bearer ${GITHUB_TOKEN}"}}),
				importedServer(h, file, "servers.playwright", Server{Type: TransportStdio, Command: "npx", Args: []string{"@playwright/mcp@latest"},
					Env: map[string]string{"PW_WORKERS": "2"}}),
			}, []Problem{
				importWarning(file, "servers.memory.env.API_KEY", "memory", `uses the VS Code input "api-key", which Switchboard cannot resolve: VS Code prompts for its value and keeps it (server skipped; hint: add the server to Switchboard with a reference such as ${API_KEY})`),
				importWarning(file, "servers.playwright.env.DEBUG", "playwright", "null ignored: Switchboard cannot unset a variable or header"),
				importWarning(file, "servers.playwright.sandboxEnabled", "playwright", "sandboxEnabled is not supported: the server runs without VS Code's sandbox"),
			}
	}
	linuxServers, linuxProblems := mcpJSON(vscodeLinux)
	macServers, macProblems := mcpJSON(vscodeMac)
	fetch := importedServer(h, vscodeSettings, "mcp.servers.fetch", Server{Type: TransportStdio, Command: "uvx", Args: []string{"mcp-server-fetch"}})
	return []hostCase{{
		name: "vscode linux with legacy settings", host: h, goos: "linux",
		files:     map[string]string{vscodeLinux: "vscode/mcp.json", vscodeSettings: "vscode/settings.json"},
		wantFiles: []string{vscodeSettings, vscodeLinux},
		servers:   append([]*Server{fetch}, linuxServers...),
		problems:  linuxProblems,
	}, {
		name: "vscode macos", host: h, goos: "darwin",
		files:     map[string]string{vscodeMac: "vscode/mcp.json", vscodeLinux: "vscode/mcp.json"},
		wantFiles: []string{vscodeMac},
		servers:   macServers,
		problems:  macProblems,
	}, {
		name: "vscode settings without mcp", host: h, goos: "linux",
		files: map[string]string{vscodeSettings: `inline:{"editor.fontSize": 14, // small
}`},
	}}
}

func hostCases() []hostCase {
	cases := []hostCase{
		claudeDesktopCase("claude-desktop linux", "linux", claudeDesktopLinux),
		claudeDesktopCase("claude-desktop macos", "darwin", claudeDesktopMac),
		{
			name: "claude-desktop macos ignores the linux file", host: "claude-desktop", goos: "darwin",
			files: map[string]string{claudeDesktopLinux: "claude-desktop/claude_desktop_config.json"},
		},
		{
			name: "claude-code user scope", host: "claude-code",
			files:     map[string]string{claudeCodeFile: "claude-code/claude.json"},
			wantFiles: []string{claudeCodeFile},
			servers: []*Server{
				importedServer("claude-code", claudeCodeFile, "mcpServers.api", Server{Type: TransportHTTP,
					URL:     "${API_BASE_URL:-https://api.example.com}/mcp",
					Headers: map[string]string{"Authorization": "Bearer ${API_KEY}"}}),
				importedServer("claude-code", claudeCodeFile, "mcpServers.db", Server{Type: TransportStdio, Command: "npx",
					Args: []string{"-y", "@bytebase/dbhub", "--dsn", "${DB_DSN}"}, Env: map[string]string{},
					RequestTimeout: 30 * time.Second}),
				importedServer("claude-code", claudeCodeFile, "mcpServers.linear", Server{Type: TransportHTTP, URL: "https://mcp.linear.app/mcp"}),
				importedServer("claude-code", claudeCodeFile, "mcpServers.quick", Server{Type: TransportStdio, Command: "quick-mcp"}),
				importedServer("claude-code", claudeCodeFile, "mcpServers.sentry", Server{Type: TransportSSE, URL: "https://mcp.sentry.dev/sse"}),
			},
			problems: []Problem{
				importWarning(claudeCodeFile, "mcpServers.db.args", "db", "args is passed literally: the reference ${DB_DSN} is not expanded there (only in env, headers and url)"),
				importWarning(claudeCodeFile, "mcpServers.linear.headersHelper", "linear", "headersHelper is not supported: the headers it prints are not sent"),
				importWarning(claudeCodeFile, "mcpServers.sockets.type", "sockets", `must be "stdio", "http" (or "streamable-http"), "sse" or "socket", not "ws" (server skipped)`),
			},
		},
		{
			name: "cursor", host: "cursor",
			files:     map[string]string{cursorFile: "cursor/mcp.json"},
			wantFiles: []string{cursorFile},
			servers: []*Server{
				importedServer("cursor", cursorFile, "mcpServers.notion", Server{Type: TransportStdio, Command: "npx",
					Args: []string{"-y", "@notionhq/notion-mcp-server"}, Env: map[string]string{"NOTION_TOKEN": "${NOTION_TOKEN}"}}),
				importedServer("cursor", cursorFile, "mcpServers.remote-server", Server{Type: TransportHTTP, TypeInferred: true, URL: "https://api.example.com/mcp",
					Headers: map[string]string{"Authorization": "Bearer ${MY_SERVICE_TOKEN}"}}),
			},
			problems: []Problem{
				importWarning(cursorFile, "mcpServers.local-server.args[0]", "local-server", "uses ${workspaceFolder}, which only Cursor can expand (server skipped)"),
				importWarning(cursorFile, "mcpServers.notion.envFile", "notion", "envFile is not supported: the variables it holds are not passed to the server"),
			},
		},
		{
			name: "windsurf", host: "windsurf",
			files:     map[string]string{windsurfFile: "windsurf/mcp_config.json"},
			wantFiles: []string{windsurfFile},
			servers: []*Server{
				importedServer("windsurf", windsurfFile, "mcpServers.github", Server{Type: TransportStdio, Command: "npx",
					Args: []string{"-y", "@modelcontextprotocol/server-github"},
					Env:  map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${GITHUB_TOKEN}"}}),
				importedServer("windsurf", windsurfFile, "mcpServers.remote-http-mcp", Server{Type: TransportHTTP, TypeInferred: true, URL: "https://example.com/mcp",
					Headers: map[string]string{"API_KEY": "${API_KEY}"}}),
			},
			problems: []Problem{
				importWarning(windsurfFile, "mcpServers.secrets.env.VAULT_TOKEN", "secrets", "uses ${file:/home/me/.vault-token}, which only Windsurf can expand (server skipped)"),
			},
		},
		{
			name: "codex", host: "codex",
			files:     map[string]string{codexFile: "codex/config.toml"},
			secrets:   []string{"sk-proj-FAKEfakeFAKE0123456789"},
			wantFiles: []string{codexFile},
			servers: []*Server{
				importedServer("codex", codexFile, "mcp_servers.context7", Server{Type: TransportStdio, Command: "npx",
					Args: []string{"-y", "@upstash/context7-mcp"}, Env: map[string]string{"CONTEXT7_API_KEY": "${CONTEXT7_API_KEY}"}}),
				importedServer("codex", codexFile, "mcp_servers.docs", Server{Type: TransportStdio, Command: "docs-mcp", Args: []string{"--stdio"},
					Cwd: "/home/me/docs", Env: map[string]string{"LOG_LEVEL": "debug"}, Disabled: true,
					IncludeTools: []string{"search", "open"}, RequestTimeout: 90 * time.Second}),
				importedServer("codex", codexFile, "mcp_servers.figma", Server{Type: TransportHTTP, TypeInferred: true, URL: "https://mcp.figma.com/mcp",
					Headers: map[string]string{"Authorization": "Bearer ${FIGMA_TOKEN}"}, ExcludeTools: []string{"delete_file"}}),
				importedServer("codex", codexFile, "mcp_servers.linear", Server{Type: TransportHTTP, TypeInferred: true, URL: "https://mcp.linear.app/mcp",
					Headers: map[string]string{"X-Team": "eng", "X-Api-Key": "${LINEAR_API_KEY}"}}),
			},
			problems: []Problem{
				credentialImportWarning("codex", codexFile, "mcp_servers.leaky.env.OPENAI_API_KEY", "leaky", "OPENAI_API_KEY"),
			},
		},
		{
			name: "codex in CODEX_HOME", host: "codex", codexHome: "codex-home",
			files: map[string]string{
				codexFile: "codex/config.toml", // not read: CODEX_HOME moves it
				"codex-home/config.toml": `inline:[mcp_servers.other]
command = "other"
args = ["serve"]
env_vars = ["SB_LOG", { name = "SB_TOKEN", source = "local" }]

[mcp_servers.switchboard]
command = "switchboard"
args = ["serve"]

[mcp_servers.inline]
url = "https://example.com/mcp"
bearer_token = "tok-LITERALliteral42"
`,
			},
			secrets:   []string{"tok-LITERALliteral42"},
			wantFiles: []string{"codex-home/config.toml"},
			servers: []*Server{
				importedServer("codex", "codex-home/config.toml", "mcp_servers.other", Server{Type: TransportStdio, Command: "other", Args: []string{"serve"},
					Env: map[string]string{"SB_LOG": "${SB_LOG}", "SB_TOKEN": "${SB_TOKEN}"}}),
			},
			problems: []Problem{
				importWarning("codex-home/config.toml", "mcp_servers.inline.bearer_token", "inline", "an inline bearer_token is not supported, by Codex either: use bearer_token_env_var (the value is not shown; server skipped)"),
				importWarning("codex-home/config.toml", "mcp_servers.switchboard", "switchboard", selfWarning(`"switchboard serve" starts Switchboard itself`)),
			},
		},
		{
			name: "opencode v1", host: "opencode",
			files:     map[string]string{opencodeJSON: "opencode/opencode.json"},
			wantFiles: []string{opencodeJSON},
			servers: []*Server{
				importedServer("opencode", opencodeJSON, "mcp.context7", Server{Type: TransportHTTP, URL: "https://mcp.context7.com/mcp",
					Headers: map[string]string{"CONTEXT7_API_KEY": "${CONTEXT7_API_KEY}"}}),
				importedServer("opencode", opencodeJSON, "mcp.everything", Server{Type: TransportStdio, Command: "npx",
					Args: []string{"-y", "@modelcontextprotocol/server-everything"}, Env: map[string]string{"LOG_LEVEL": "info"}}),
				importedServer("opencode", opencodeJSON, "mcp.sentry", Server{Type: TransportHTTP, URL: "https://mcp.sentry.dev/mcp", Disabled: true}),
			},
			problems: []Problem{
				importWarning(opencodeJSON, "mcp.notes.environment.NOTES_TOKEN", "notes", "uses {file:~/.secrets/notes-token}, which only opencode can expand (server skipped)"),
			},
		},
		{
			name: "opencode v2", host: "opencode",
			files:     map[string]string{opencodeJSONC: "opencode/opencode.jsonc"},
			wantFiles: []string{opencodeJSONC},
			servers: []*Server{
				importedServer("opencode", opencodeJSONC, "mcp.servers.old", Server{Type: TransportStdio, Command: "old-mcp", Args: []string{"--quiet"},
					Cwd: "/srv/old", Disabled: true}),
				importedServer("opencode", opencodeJSONC, "mcp.servers.remote", Server{Type: TransportHTTP, URL: "http://127.0.0.1:8931/mcp", OAuth: &OAuth{Disabled: true}}),
			},
			problems: []Problem{
				importWarning(opencodeJSONC, "mcp.servers.switchboard", "switchboard", selfWarning(`"switchboard serve" starts Switchboard itself`)),
			},
		},
		{
			name: "opencode v1 server named servers", host: "opencode",
			files:     map[string]string{opencodeJSON: `inline:{"mcp": {"servers": {"type": "local", "command": ["srv", "--x"], "environment": {"MODE": "{env:SRV_MODE}"}, "pool": 3}}}`},
			wantFiles: []string{opencodeJSON},
			servers: []*Server{
				importedServer("opencode", opencodeJSON, "mcp.servers", Server{Type: TransportStdio, Command: "srv", Args: []string{"--x"},
					Env: map[string]string{"MODE": "${SRV_MODE}"}}),
			},
			problems: []Problem{
				importWarning(opencodeJSON, "mcp.servers", "servers", `unknown field "pool" ignored`),
			},
		},
		{
			name: "opencode problems name the host's fields", host: "opencode",
			files: map[string]string{opencodeJSON: `inline:{"mcp": {
  "gh": {"type": "local", "command": ["gh-mcp", "--stdio"], "environment": {"GH_TOKEN": "gho_LITERALliteral99"}},
  "web": {"type": "remote", "url": "ftp://example.com/mcp", "enabled": true}
}}`},
			secrets:   []string{"gho_LITERALliteral99"},
			wantFiles: []string{opencodeJSON},
			problems: []Problem{
				credentialImportWarning("opencode", opencodeJSON, "mcp.gh.environment.GH_TOKEN", "gh", "GH_TOKEN"),
				importWarning(opencodeJSON, "mcp.web.url", "web", "must be an http:// or https:// URL such as https://example.com/mcp (server skipped)"),
			},
		},
		{
			name: "gemini", host: "gemini",
			files:     map[string]string{geminiFile: "gemini/settings.json"},
			wantFiles: []string{geminiFile},
			servers: []*Server{
				importedServer("gemini", geminiFile, "mcpServers.events", Server{Type: TransportSSE, URL: "http://localhost:4000/sse"}),
				importedServer("gemini", geminiFile, "mcpServers.httpServer", Server{Type: TransportHTTP, URL: "http://localhost:3000/mcp",
					Headers: map[string]string{"Authorization": "Bearer ${API_TOKEN}"}}),
				importedServer("gemini", geminiFile, "mcpServers.legacy", Server{Type: TransportStdio, Command: "legacy-mcp",
					IncludeTools: []string{"read"}, Disabled: true}),
				importedServer("gemini", geminiFile, "mcpServers.oldEvents", Server{Type: TransportSSE, URL: "http://localhost:4001/sse"}),
				importedServer("gemini", geminiFile, "mcpServers.pythonTools", Server{Type: TransportStdio, Command: "python",
					Args: []string{"-m", "my_mcp_server"}, Cwd: "./mcp-servers/python", Env: map[string]string{"API_KEY": "${EXTERNAL_API_KEY}"},
					RequestTimeout: 15 * time.Second, ExcludeTools: []string{"delete_all"}}),
				importedServer("gemini", geminiFile, "mcpServers.switchboard", Server{Type: TransportHTTP, URL: "http://127.0.0.1:8931/mcp"}),
			},
		},
		{
			name: "enabled false turns a server off", host: "cursor",
			files: map[string]string{cursorFile: `inline:{"mcpServers": {
  "off": {"command": "off-mcp", "enabled": false},
  "on": {"command": "on-mcp", "enabled": true}
}}`},
			wantFiles: []string{cursorFile},
			servers: []*Server{
				importedServer("cursor", cursorFile, "mcpServers.off", Server{Type: TransportStdio, Command: "off-mcp", Disabled: true}),
				importedServer("cursor", cursorFile, "mcpServers.on", Server{Type: TransportStdio, Command: "on-mcp"}),
			},
		},
		{
			name: "broken JSON", host: "cursor",
			files: map[string]string{cursorFile: `inline:{
  "mcpServers": {
    "a": {"command": "a-mcp"}
    "b": {"command": "b-mcp"}
  }
}`},
			wantFiles: []string{cursorFile},
			problems: []Problem{{Severity: SeverityWarning, File: cursorFile, Line: 4, Col: 5,
				Message: "invalid JSON: invalid character '\"' after object value (expecting ',' or '}') (nothing imported)"}},
		},
		{
			name: "broken TOML", host: "codex",
			files: map[string]string{codexFile: `inline:[mcp_servers.a]
command = "a-mcp"
env = { API_TOKEN = tok-BAREliteral }
`},
			secrets:   []string{"BAREliteral"},
			wantFiles: []string{codexFile},
			problems: []Problem{{Severity: SeverityWarning, File: codexFile, Line: 3, Col: 21,
				Message: `invalid TOML: expected value but found "…" instead (nothing imported)`}},
		},
	}
	return append(cases, vscodeCases()...)
}

func TestImportHost(t *testing.T) {
	for _, tc := range hostCases() {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{}
			for rel, src := range tc.files {
				if inline, ok := strings.CutPrefix(src, "inline:"); ok {
					files[rel] = inline
				} else {
					files[rel] = hostSample(t, src)
				}
			}
			home := hostHome(t, files)
			d := Dirs{Home: home, GOOS: tc.goos}
			if tc.codexHome != "" {
				d.CodexHome = filepath.Join(home, tc.codexHome)
			}
			imp := ImportHost(d, tc.host)
			relativeImport(t, home, imp)
			if imp.Host != tc.host {
				t.Errorf("Host: got %q, want %q", imp.Host, tc.host)
			}
			if diff := cmp.Diff(tc.wantFiles, imp.Files, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Files: got %q, want %q (-want +got):\n%s", imp.Files, tc.wantFiles, diff)
			}
			if diff := cmp.Diff(tc.servers, imp.Servers, importCmpOpts); diff != "" {
				t.Errorf("Servers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.problems, imp.Problems, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Problems (-want +got):\n%s", diff)
			}
			for _, secret := range tc.secrets {
				for _, p := range imp.Problems {
					if strings.Contains(fmt.Sprintf("%+v %s", p, p.Error()), secret) {
						t.Errorf("got a warning that shows the literal %q: %s", secret, p.Error())
					}
				}
			}
		})
	}
}

func TestImportHostMissingFiles(t *testing.T) {
	for _, goos := range []string{"linux", "darwin"} {
		for _, host := range HostNames() {
			t.Run(goos+"/"+host, func(t *testing.T) {
				home := hostHome(t, map[string]string{".config/Code/User/settings.json": `{"editor.tabSize": 2}`})
				imp := ImportHost(Dirs{Home: home, GOOS: goos}, host)
				if len(imp.Files) != 0 || len(imp.Servers) != 0 || len(imp.Problems) != 0 {
					t.Errorf("got files %q, %d servers, problems %v; want nothing", imp.Files, len(imp.Servers), imp.Problems)
				}
			})
		}
	}
}

func TestImportHostUnknown(t *testing.T) {
	imp := ImportHost(Dirs{Home: t.TempDir()}, "notepad")
	if len(imp.Problems) != 1 || !strings.Contains(imp.Problems[0].Message, `unknown host "notepad"`) {
		t.Errorf("got problems %v, want one about the unknown host", imp.Problems)
	}
}

// TestImportHostReadOnly checks that importing changes no file: not the
// content, not the mode, not the modification time, and adds none.
func TestImportHostReadOnly(t *testing.T) {
	files := map[string]string{}
	for _, tc := range hostCases() {
		for rel, src := range tc.files {
			if !strings.HasPrefix(src, "inline:") {
				files[rel] = hostSample(t, src)
			}
		}
	}
	home := hostHome(t, files)
	past := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	err := filepath.WalkDir(home, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(path, past, past)
	})
	if err != nil {
		t.Fatal(err)
	}
	before := treeSnapshot(t, home)
	for _, goos := range []string{"linux", "darwin"} {
		for _, host := range HostNames() {
			if imp := ImportHost(Dirs{Home: home, GOOS: goos}, host); goos == "linux" && len(imp.Servers) == 0 {
				t.Errorf("%s: got no servers; the test does not exercise the importer", host)
			}
		}
	}
	after := treeSnapshot(t, home)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("importing changed the fake home (-before +after):\n%s", diff)
	}
}

type treeEntry struct {
	Mode    fs.FileMode
	ModTime time.Time
	Content []byte
}

func treeSnapshot(t *testing.T, root string) map[string]treeEntry {
	t.Helper()
	out := map[string]treeEntry{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st := treeEntry{Mode: info.Mode(), ModTime: info.ModTime()}
		if !d.IsDir() {
			if st.Content, err = os.ReadFile(path); err != nil {
				return err
			}
		}
		out[path] = st
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzImportHost feeds the same bytes to every host's file: importing must
// not panic, and whatever it imports must be a valid definition of that
// host's file.
func FuzzImportHost(f *testing.F) {
	for _, name := range []string{"claude-code/claude.json", "vscode/mcp.json", "codex/config.toml",
		"opencode/opencode.json", "opencode/opencode.jsonc", "gemini/settings.json", "windsurf/mcp_config.json"} {
		f.Add([]byte(hostSample(f, name)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var files = map[string]string{}
		for _, rel := range []string{claudeDesktopLinux, claudeCodeFile, cursorFile, vscodeLinux, vscodeSettings,
			windsurfFile, codexFile, opencodeJSON, geminiFile} {
			files[rel] = string(data)
		}
		home := hostHome(t, files)
		for _, host := range HostNames() {
			imp := ImportHost(Dirs{Home: home}, host)
			for _, s := range imp.Servers {
				if !ValidName(s.Name) || s.Source.Kind != KindImport || s.Source.Host != host {
					t.Errorf("%s: got server %q from %+v", host, s.Name, s.Source)
				}
				if (s.Command == "") == (s.URL == "") {
					t.Errorf("%s: got server %q with command %q and url %q", host, s.Name, s.Command, s.URL)
				}
				checkServerText(t, s)
			}
			for _, p := range imp.Problems {
				if p.Severity != SeverityWarning {
					t.Errorf("%s: got %s, want only warnings", host, p.Error())
				}
			}
		}
	})
}

func ExampleImportHost() {
	home, err := os.MkdirTemp("", "home")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(home)
	file := filepath.Join(home, ".cursor", "mcp.json")
	_ = os.MkdirAll(filepath.Dir(file), 0o755)
	_ = os.WriteFile(file, []byte(`{"mcpServers": {
  "github": {"url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${env:GITHUB_TOKEN}"}},
  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}
}}`), 0o644)

	imp := ImportHost(Dirs{Home: home, GOOS: "linux"}, "cursor")
	for _, s := range imp.Servers {
		fmt.Println(s, s.Headers)
	}
	fmt.Println(len(imp.Problems), "problems")
	// Output:
	// github: http https://api.githubcopilot.com/mcp/ map[Authorization:Bearer ${GITHUB_TOKEN}]
	// memory: stdio npx -y @modelcontextprotocol/server-memory map[]
	// 0 problems
}

// TestImportSkipsSelf checks that an import never lists Switchboard itself:
// its serve command by name, the running binary by path, or the address
// serve --http listens on; each is skipped with a warning saying why.
func TestImportSkipsSelf(t *testing.T) {
	bin := t.TempDir()
	exe := filepath.Join(bin, "switchboard-v2")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(bin, "sb")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	self := Self{Executable: exe, Addr: "127.0.0.1:8931"}
	tests := []struct {
		name  string
		entry string // the value of mcpServers.x in Cursor's file
		self  Self
		why   string // "" when the entry is imported
	}{
		{"bare name", `{"command": "switchboard", "args": ["serve", "--log-level", "debug"]}`, Self{}, `"switchboard serve" starts Switchboard itself`},
		{"path", `{"command": "/opt/bin/switchboard", "args": ["serve"]}`, Self{}, `"/opt/bin/switchboard serve" starts Switchboard itself`},
		{"windows path", `{"command": "C:\\Tools\\Switchboard.EXE", "args": ["serve"]}`, Self{}, `"C:\\Tools\\Switchboard.EXE serve" starts Switchboard itself`},
		{"not serve", `{"command": "switchboard", "args": ["status"]}`, Self{}, ""},
		{"another program named like it", `{"command": "switchboard-mcp", "args": ["serve"]}`, Self{}, ""},
		{"the running binary", `{"command": "` + exe + `", "args": ["serve"]}`, self, exe + " is the running switchboard binary"},
		{"a link to the running binary", `{"command": "` + link + `"}`, self, link + " is the running switchboard binary"},
		{"the running binary unknown", `{"command": "` + link + `"}`, Self{}, ""},
		{"served address", `{"url": "http://127.0.0.1:8931/mcp"}`, self, "http://127.0.0.1:8931/mcp is the address this switchboard serves"},
		{"served address by name", `{"url": "http://localhost:8931/mcp?x=1"}`, self, "http://localhost:8931/mcp?… is the address this switchboard serves"},
		{"every interface", `{"url": "http://[::1]:8931/mcp"}`, Self{Addr: ":8931"}, "http://[::1]:8931/mcp is the address this switchboard serves"},
		{"default port", `{"url": "http://127.0.0.1/mcp"}`, Self{Addr: "127.0.0.1:80"}, "http://127.0.0.1/mcp is the address this switchboard serves"},
		{"another port", `{"url": "http://127.0.0.1:8932/mcp"}`, self, ""},
		{"another host", `{"url": "https://example.com:8931/mcp"}`, Self{Addr: ":8931"}, ""},
		{"a port from a reference", `{"url": "http://127.0.0.1:${env:PORT}/mcp"}`, self, ""},
		{"not serving", `{"url": "http://127.0.0.1:8931/mcp"}`, Self{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := hostHome(t, map[string]string{cursorFile: `{"mcpServers": {"x": ` + tt.entry + `, "other": {"command": "other"}}}`})
			imp := ImportHost(Dirs{Home: home, Self: tt.self}, "cursor")
			var names []string
			for _, s := range imp.Servers {
				names = append(names, s.Name)
			}
			want := []string{"other", "x"}
			var problems []Problem
			if tt.why != "" {
				want = []string{"other"}
				problems = []Problem{importWarning(filepath.Join(home, cursorFile), "mcpServers.x", "x", selfWarning(tt.why))}
			}
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(problems, imp.Problems, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestImportsSkipSelf checks the same through settings.imports: the
// gateway's configuration never holds itself.
func TestImportsSkipSelf(t *testing.T) {
	d := newDirs(t)
	writeFile(t, filepath.Join(d.Home, cursorFile), `{"mcpServers": {"gateway": {"command": "switchboard", "args": ["serve"]}, "fs": {"command": "fs-mcp"}}}`)
	writeFile(t, pathsOf(d).user, `{"imports": ["cursor"]}`)
	c := Load(d)
	noErrors(t, c)
	if names := allNames(c); !cmp.Equal(names, []string{"fs"}) {
		t.Errorf("servers: got %v, want [fs]", names)
	}
	if w := problemText(c.Warnings()); !strings.Contains(w, `mcpServers.gateway: skipped: "switchboard serve" starts Switchboard itself, and a gateway must not list itself`) {
		t.Errorf("warnings: got %q, want the gateway entry skipped", w)
	}
}
