package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writePlugin writes a plugin directory: plugin.json (none when manifest
// is "") and mcp.json (none when servers is "").
func writePlugin(t *testing.T, dir, manifest, servers string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if manifest != "" {
		writeFile(t, filepath.Join(dir, "plugin.json"), manifest)
	}
	if servers != "" {
		writeFile(t, filepath.Join(dir, "mcp.json"), servers)
	}
}

func userPlugins(t *testing.T, d Dirs, dirs ...string) {
	t.Helper()
	q := make([]string, len(dirs))
	for i, dir := range dirs {
		q[i] = fmt.Sprintf("%q", dir)
	}
	writeFile(t, pathsOf(d).user, `{"settings": {"agentPluginPaths": [`+strings.Join(q, ", ")+`]}}`)
}

func TestAgentPlugins(t *testing.T) {
	d := newDirs(t)
	root := filepath.Join(d.Home, ".config", "switchboard", "plugins", "acme")
	writePlugin(t, root,
		`{"$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", "name": "acme.tools", "version": "1.0.0", "author": {"name": "A"}}`,
		`{
  "$schema": "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json",
  "mcpServers": {
    "local": {
      "type": "stdio",
      "command": "./bin/server",
      "args": ["--config", "${PLUGIN_ROOT}/config.json", "--data=${PLUGIN_DATA}/x", "${OTHER}"],
      "env": {"CONFIG": "${PLUGIN_ROOT}/c.json", "GITHUB_TOKEN": "${GITHUB_TOKEN}"},
      "cwd": "${PLUGIN_DATA}"
    },
    "remote": {"type": "streamable-http", "url": "https://mcp.example.com/mcp", "headers": {"X-Tenant": "public"}},
    "bad": {"type": "stdio", "command": "x", "lifecycle": "eager"}
  }
}`)
	missing := filepath.Join(d.Home, "not-a-plugin")
	writePlugin(t, missing, "", `{"mcpServers": {"s": {"command": "x"}}}`)
	writeFile(t, pathsOf(d).user, `{"settings": {"agentPluginPaths": ["plugins/acme", "~/not-a-plugin"]}}`)

	c := Load(d)
	if c.Err() != nil {
		t.Fatalf("Err: %v, want nil: a plugin cannot fail the configuration closed", c.Err())
	}
	data := filepath.Join(d.StateDir(), "plugins", "acme.tools")
	local := mustServer(t, c, "acme_tools__local")
	want := &Server{Command: filepath.Join(root, "bin", "server"),
		Args: []string{"--config", root + "/config.json", "--data=" + data + "/x", "${OTHER}"},
		Env:  map[string]string{"CONFIG": root + "/c.json", "GITHUB_TOKEN": "${GITHUB_TOKEN}", "PLUGIN_ROOT": root, "PLUGIN_DATA": data},
		Cwd:  data, DataDir: data}
	got := &Server{Command: local.Command, Args: local.Args, Env: local.Env, Cwd: local.Cwd, DataDir: local.DataDir}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Server{})); diff != "" {
		t.Errorf("acme_tools__local (-want +got):\n%s", diff)
	}
	if local.Source.Kind != KindPlugin || local.Source.Path != filepath.Join(root, "mcp.json") || local.Source.Plugin != "acme.tools" {
		t.Errorf("source: got %+v, want the plugin's mcp.json", local.Source)
	}
	if local.Err != nil {
		t.Errorf("Err: %v", local.Err)
	}
	remote := mustServer(t, c, "acme_tools__remote")
	if remote.Type != TransportHTTP || remote.URL != "https://mcp.example.com/mcp" || remote.Env != nil {
		t.Errorf("remote: got %s, %q, env %v", remote.Type, remote.URL, remote.Env)
	}
	if _, err := c.Usable("acme_tools__bad"); err == nil {
		t.Error("acme_tools__bad: usable, want invalid: lifecycle is not a field of an Agent Plugins server")
	}
	text := problemText(c.Problems)
	for _, w := range []string{
		`mcp.json:12:59: mcpServers.bad.lifecycle: "lifecycle" is not a field of an Agent Plugins 1.0 server`,
		filepath.Join(missing, "plugin.json") + ": not loaded as an Agent Plugin: the directory has no plugin.json",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("problems:\n%s\nwant one containing %q", text, w)
		}
	}
	if _, err := os.Stat(data); err == nil {
		t.Error("Load created the plugin's data directory; only starting a server does")
	}
}

func TestAgentPluginRefused(t *testing.T) {
	tests := []struct {
		name     string
		manifest string
		servers  string
		want     string // in a problem
		loaded   []string
	}{
		{"no name", `{"version": "1"}`, "", `plugin.json has no "name"`, nil},
		{"bad name", `{"name": "Acme"}`, "", `plugin.json:1:10: name: not loaded as an Agent Plugin: invalid name "Acme"`, nil},
		{"name not a string", `{"name": 3}`, "", "the name must be a string, not a number", nil},
		{"manifest not json", `{"name": `, "", "invalid JSON", nil},
		{"mcp.json not json", `{"name": "p"}`, `{"mcpServers": `, `(plugin "p": its servers are skipped)`, nil},
		{"too long", `{"name": "` + strings.Repeat("p", 60) + `"}`, `{"mcpServers": {"abcd": {"command": "x"}, "a": {"command": "x"}}}`,
			`server "abcd" is skipped: its name ` + strings.Repeat("p", 60) + `__abcd is 66 characters, over the limit of 64`, []string{strings.Repeat("p", 60) + "__a"}},
		{"reserved env", `{"name": "p"}`, `{"mcpServers": {"s": {"command": "x", "env": {"PLUGIN_ROOT": "/"}}, "ok": {"command": "x"}}}`,
			"PLUGIN_ROOT is set by Switchboard", []string{"p__ok"}},
		{"cwd outside", `{"name": "p"}`, `{"mcpServers": {"s": {"command": "x", "cwd": "${PLUGIN_ROOT}/../.."}}}`, "leads out of the plugin's directory", nil},
		{"cwd absolute", `{"name": "p"}`, `{"mcpServers": {"s": {"command": "x", "cwd": "/tmp"}}}`, `a plugin's cwd is ./PATH`, nil},
		{"command outside", `{"name": "p"}`, `{"mcpServers": {"s": {"command": "./../x"}}}`, `the command "./../x" leads out`, nil},
		{"command path", `{"name": "p"}`, `{"mcpServers": {"s": {"command": "/bin/sh"}}}`, `a plugin's command is a program's name`, nil},
		{"secret reference", `{"name": "p"}`, `{"mcpServers": {"s": {"command": "x", "env": {"T": "${secret:github}"}}}}`, "${secret:…} is refused", nil},
		{"command reference", `{"name": "p"}`, `{"mcpServers": {"s": {"command": "x", "env": {"T": "${cmd:pass show x}"}}}}`, "a ${cmd:…} reference runs a command", nil},
		{"header reference", `{"name": "p"}`, `{"mcpServers": {"s": {"type": "streamable-http", "url": "https://e.com/", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}}}`,
			"a plugin's url and headers are used as written", nil},
		{"url reference", `{"name": "p"}`, `{"mcpServers": {"s": {"url": "https://e.com/?k=${K}"}}}`, "a plugin's url and headers are used as written", nil},
		{"bearer token", `{"name": "p"}`, `{"mcpServers": {"s": {"url": "https://e.com/", "bearerToken": "${T}"}}}`, `"bearerToken" is not a field`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirs(t)
			dir := filepath.Join(d.Home, "plug")
			writePlugin(t, dir, tt.manifest, tt.servers)
			userPlugins(t, d, dir)
			c := Load(d)
			if c.Err() != nil {
				t.Fatalf("Err: %v, want nil", c.Err())
			}
			if text := problemText(c.Errors()); !strings.Contains(text, tt.want) {
				t.Errorf("errors:\n%s\nwant one containing %q", text, tt.want)
			}
			if diff := cmp.Diff(tt.loaded, usableNames(c)); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAgentPluginPrecedence(t *testing.T) {
	d := newDirs(t)
	dir := filepath.Join(d.Home, "plug")
	writePlugin(t, dir, `{"name": "p"}`, `{"mcpServers": {"a": {"command": "plugin-a"}, "b": {"command": "plugin-b"}, "c": {"command": "plugin-c"}}}`)
	writeFile(t, pathsOf(d).shared, `{"mcpServers": {"p__a": {"command": "shared-a"}}}`)
	writeFile(t, pathsOf(d).user, fmt.Sprintf(`{"settings": {"agentPluginPaths": [%q]}, "mcpServers": {"p__b": {"command": "user-b"}, "p__c": {"disabled": true}}}`, dir))
	c := Load(d)
	noErrors(t, c)
	for name, want := range map[string]string{"p__a": "shared-a", "p__b": "user-b", "p__c": "plugin-c"} {
		if s := mustServer(t, c, name); s.Command != want {
			t.Errorf("%s: got command %q, want %q", name, s.Command, want)
		}
	}
	if !mustServer(t, c, "p__c").Disabled {
		t.Error(`p__c: enabled, want disabled by the user's {"disabled": true}`)
	}
}

func TestAgentPluginPathsInProject(t *testing.T) {
	d := newDirs(t)
	dir := filepath.Join(d.Project, "plug")
	writePlugin(t, dir, `{"name": "p"}`, `{"mcpServers": {"s": {"command": "x"}}}`)
	writeFile(t, pathsOf(d).project, `{"settings": {"agentPluginPaths": ["../plug"]}}`)
	trust(t, d)
	c := Load(d)
	noErrors(t, c)
	if names := c.Names(); len(names) != 0 {
		t.Errorf("servers: got %v, want none: a project's file cannot name plugins", names)
	}
	if text := problemText(c.Warnings()); !strings.Contains(text, "a project's file cannot name Agent Plugins") {
		t.Errorf("warnings:\n%s\nwant one saying a project cannot name plugins", text)
	}
}

func TestAgentPluginDuplicateName(t *testing.T) {
	d := newDirs(t)
	one, two := filepath.Join(d.Home, "one"), filepath.Join(d.Home, "two")
	writePlugin(t, one, `{"name": "p"}`, `{"mcpServers": {"s": {"command": "one"}}}`)
	writePlugin(t, two, `{"name": "p"}`, `{"mcpServers": {"s": {"command": "two"}}}`)
	userPlugins(t, d, one, two)
	c := Load(d)
	if s := mustServer(t, c, "p__s"); s.Command != "one" {
		t.Errorf("p__s: got %q, want the first plugin's", s.Command)
	}
	if text := problemText(c.Errors()); !strings.Contains(text, `plugin "p" is skipped: the plugin in `+one+" has the same name") {
		t.Errorf("errors:\n%s\nwant one about the second plugin", text)
	}
}

// FuzzAgentPlugin feeds a plugin's plugin.json and mcp.json to their
// decoders: whatever they hold, a server comes out named
// <plugin>__<server>, valid, with PLUGIN_ROOT and PLUGIN_DATA set when it
// is a command, and every problem names a file.
func FuzzAgentPlugin(f *testing.F) {
	f.Add([]byte(`{"name": "p"}`), []byte(`{"mcpServers": {"s": {"command": "./x", "args": ["${PLUGIN_ROOT}"], "cwd": "${PLUGIN_DATA}/a"}}}`))
	f.Add([]byte(`{"name": "a.b"}`), []byte(`{"mcpServers": {"s": {"url": "https://e.com/", "headers": {"X": "${A}"}}}}`))
	f.Add([]byte(`{"name": 1}`), []byte(`{`))
	f.Add([]byte(`[]`), []byte(`{"mcpServers": {"s": {"command": "x", "env": {"PLUGIN_DATA": "x"}, "cwd": "./../.."}}}`))
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, manifest, servers []byte) {
		name, prob := manifestName("/fuzz/plugin.json", manifest)
		if prob != nil {
			if prob.File != "/fuzz/plugin.json" || prob.Message == "" || prob.Severity != SeverityError {
				t.Errorf("manifest problem: got %+v", prob)
			}
			return
		}
		p := &plugin{name: name, prefix: strings.ReplaceAll(name, ".", "_"), root: root, data: filepath.Join(root, "data")}
		src := Source{Kind: KindPlugin, Path: "/fuzz/mcp.json", Plugin: name}
		doc, problems := decodePlugin(src, servers, p)
		for _, pr := range problems {
			if pr.File != src.Path || pr.Message == "" {
				t.Errorf("problem: got %+v", pr)
			}
		}
		if doc == nil {
			return
		}
		for _, s := range doc.servers {
			if !ValidName(s.Name) || !strings.HasPrefix(s.Name, p.prefix+"__") {
				t.Errorf("server name %q: not valid, or not prefixed %q", s.Name, p.prefix+"__")
			}
			if s.Type == TransportStdio && (s.Env[PluginRootVar] != root || s.Env[PluginDataVar] != p.data || s.DataDir != p.data) {
				t.Errorf("server %q: env %v, data dir %q: want PLUGIN_ROOT and PLUGIN_DATA set", s.Name, s.Env, s.DataDir)
			}
		}
	})
}

// usableNames are the servers of c that may be connected: one whose entry
// has an error is in c.Servers, invalid.
func usableNames(c *Config) []string {
	var out []string
	for _, name := range c.Names() {
		if _, err := c.Usable(name); err == nil {
			out = append(out, name)
		}
	}
	return out
}
