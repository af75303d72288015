package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fileMode returns the permission bits of path.
func fileMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
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

func TestAddServerCreates(t *testing.T) {
	tests := []struct {
		scope Scope
		path  func(p paths) string
	}{
		{ScopeGlobal, func(p paths) string { return p.user }},
		{ScopeProject, func(p paths) string { return p.project }},
	}
	for _, tt := range tests {
		t.Run(string(tt.scope), func(t *testing.T) {
			d := newDirs(t)
			want := tt.path(pathsOf(d))
			path, err := AddServer(d, tt.scope, "fs", Definition{Command: "npx", Args: []string{"-y", "pkg"}, Env: map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}"}}, false)
			if err != nil || path != want {
				t.Fatalf("AddServer: got %q, %v, want %q", path, err, want)
			}
			const text = `{
  "mcpServers": {
    "fs": {
      "command": "npx",
      "args": [
        "-y",
        "pkg"
      ],
      "env": {
        "GITHUB_TOKEN": "${GITHUB_TOKEN}"
      }
    }
  }
}
`
			if diff := cmp.Diff(text, readString(t, path)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			if got := fileMode(t, path); got != 0o600 {
				t.Errorf("mode: got %v, want 0600", got)
			}
			if got := dirNames(t, filepath.Dir(path)); !cmp.Equal(got, []string{"config.json"}) {
				t.Errorf("directory: got %v, want only config.json", got)
			}
		})
	}
}

// formatted is a file written by a person: comments, four-space indents, a
// trailing comma, settings after the servers.
const formatted = `// my servers
{
    "mcpServers": {
        // the fs one
        "fs": {"command": "npx"}, // on fs's line
    },
    "settings": {"toolPrefix": "short"}
}
`

func TestAddServerKeepsFormatting(t *testing.T) {
	d := newDirs(t)
	p := pathsOf(d)
	writeFile(t, p.user, formatted)
	if err := os.Chmod(p.user, 0o640); err != nil {
		t.Fatal(err)
	}
	def := Definition{URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer ${T}"}}
	if _, err := AddServer(d, ScopeGlobal, "web", def, false); err != nil {
		t.Fatal(err)
	}
	const want = `// my servers
{
    "mcpServers": {
        // the fs one
        "fs": {"command": "npx"}, // on fs's line
        "web": {
            "url": "https://h/mcp",
            "headers": {
                "Authorization": "Bearer ${T}"
            }
        },
    },
    "settings": {"toolPrefix": "short"}
}
`
	if diff := cmp.Diff(want, readString(t, p.user)); diff != "" {
		t.Errorf("after add (-want +got):\n%s", diff)
	}
	if got := fileMode(t, p.user); got != 0o640 {
		t.Errorf("mode: got %v, want 0640 kept", got)
	}
	c := Load(d)
	noErrors(t, c)
	if s := mustServer(t, c, "web"); s.URL != def.URL || s.Source.Path != p.user {
		t.Errorf("web: got %q from %s, want %q from %s", s.URL, s.Source.Path, def.URL, p.user)
	}

	// Removing it again gives back the file as it was.
	if _, err := RemoveServer(d, ScopeGlobal, "web"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(formatted, readString(t, p.user)); diff != "" {
		t.Errorf("after remove (-want +got):\n%s", diff)
	}
	if got := dirNames(t, filepath.Dir(p.user)); !cmp.Equal(got, []string{"config.json"}) {
		t.Errorf("directory: got %v, want only config.json", got)
	}
}

func TestAddServerLayouts(t *testing.T) {
	tests := []struct {
		name, before, after string
	}{
		{
			name:   "compact",
			before: `{"mcpServers": {"a": {"command": "a"}}}`,
			after:  `{"mcpServers": {"a": {"command": "a"}, "b": {"command":"b"}}}`,
		},
		{
			name:   "no mcpServers yet",
			before: "{\n  \"settings\": {}\n}\n",
			after:  "{\n  \"settings\": {},\n  \"mcpServers\": {\n    \"b\": {\n      \"command\": \"b\"\n    }\n  }\n}\n",
		},
		{
			name:   "empty mcpServers, tabs",
			before: "{\n\t\"mcpServers\": {\n\t}\n}\n",
			after:  "{\n\t\"mcpServers\": {\n\t\t\"b\": {\n\t\t\t\"command\": \"b\"\n\t\t}\n\t}\n}\n",
		},
		{
			name:   "comment ending on the line of the first member",
			before: "{\n  \"mcpServers\": {\n    /* hand\n       made */ \"a\": {\"command\": \"a\"}\n  }\n}\n",
			after:  "{\n  \"mcpServers\": {\n    /* hand\n       made */ \"a\": {\"command\": \"a\"},\n    \"b\": {\n      \"command\": \"b\"\n    }\n  }\n}\n",
		},
		{
			name:   "comment after the last member",
			before: "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"} // about a\n  }\n}\n",
			after:  "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, // about a\n    \"b\": {\n      \"command\": \"b\"\n    }\n  }\n}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirs(t)
			p := pathsOf(d)
			writeFile(t, p.user, tt.before)
			if _, err := AddServer(d, ScopeGlobal, "b", Definition{Command: "b"}, false); err != nil {
				t.Fatal(err)
			}
			got := readString(t, p.user)
			if diff := cmp.Diff(tt.after, got); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			c := Load(d)
			noErrors(t, c)
			mustServer(t, c, "b")
		})
	}
}

func TestRemoveServerComments(t *testing.T) {
	// A comment after a comma belongs to the line it is on: removing the
	// next member must neither drop it nor move another member's onto it.
	const before = `{
  "mcpServers": {
    "a": {"command": "a"}, // about a
    // leading b
    "b": {"command": "b"}, /* about b */
    "c": {"command": "c"} // about c
  }
}
`
	tests := []struct {
		name, after string
	}{
		{"a", `{
  "mcpServers": {
    // leading b
    "b": {"command": "b"}, /* about b */
    "c": {"command": "c"} // about c
  }
}
`},
		{"b", `{
  "mcpServers": {
    "a": {"command": "a"}, // about a
    "c": {"command": "c"} // about c
  }
}
`},
		{"c", `{
  "mcpServers": {
    "a": {"command": "a"}, // about a
    // leading b
    "b": {"command": "b"} /* about b */
  }
}
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirs(t)
			p := pathsOf(d)
			writeFile(t, p.user, before)
			if _, err := RemoveServer(d, ScopeGlobal, tt.name); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.after, readString(t, p.user)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("trailing comma kept", func(t *testing.T) {
		d := newDirs(t)
		p := pathsOf(d)
		writeFile(t, p.user, "{\"mcpServers\": {\"a\": {\"command\": \"a\"} /* a */, \"b\": {\"command\": \"b\"},}}")
		if _, err := RemoveServer(d, ScopeGlobal, "b"); err != nil {
			t.Fatal(err)
		}
		if got, want := readString(t, p.user), "{\"mcpServers\": {\"a\": {\"command\": \"a\"} /* a */,}}"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	t.Run("only member", func(t *testing.T) {
		d := newDirs(t)
		p := pathsOf(d)
		writeFile(t, p.user, "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"} // about a\n  }\n}\n")
		if _, err := RemoveServer(d, ScopeGlobal, "a"); err != nil {
			t.Fatal(err)
		}
		if got, want := readString(t, p.user), "{\n  \"mcpServers\": {\n  }\n}\n"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestAddServerRefuses(t *testing.T) {
	const before = "{\n  // keep me\n  \"mcpServers\": {\"fs\": {\"command\": \"npx\"}}\n}\n"
	tests := []struct {
		name    string
		server  string
		def     Definition
		message string
	}{
		{"duplicate", "fs", Definition{Command: "other"}, `server "fs" is already defined in`},
		{"invalid name", "a b", Definition{Command: "x"}, `invalid server name "a b"`},
		{"credential literal", "gh", Definition{Command: "x", Env: map[string]string{"GITHUB_TOKEN": "ghp_canary"}}, "GITHUB_TOKEN looks like a credential"},
		{"credential header", "web", Definition{URL: "https://h", Headers: map[string]string{"Authorization": "Bearer canary"}}, "Authorization looks like a credential"},
		{"command and url", "both", Definition{Command: "x", URL: "https://h"}, `has both "command" and "url"`},
		{"empty", "none", Definition{}, `needs "command" (stdio) or "url"`},
		{"bad reference", "ref", Definition{Command: "x", Env: map[string]string{"A": "${A"}}, "unterminated reference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirs(t)
			p := pathsOf(d)
			writeFile(t, p.user, before)
			_, err := AddServer(d, ScopeGlobal, tt.server, tt.def, false)
			if err == nil || !strings.Contains(err.Error(), tt.message) {
				t.Fatalf("AddServer: got %v, want an error containing %q", err, tt.message)
			}
			if strings.Contains(err.Error(), "canary") {
				t.Errorf("AddServer: got %q, want the literal left out", err)
			}
			if got := readString(t, p.user); got != before {
				t.Errorf("file: got %q, want it untouched", got)
			}
			if got := dirNames(t, filepath.Dir(p.user)); !cmp.Equal(got, []string{"config.json"}) {
				t.Errorf("directory: got %v, want only config.json", got)
			}

			// Nor is a missing file created.
			d = newDirs(t)
			if _, err := AddServer(d, ScopeGlobal, tt.server, tt.def, false); err == nil && tt.name != "duplicate" {
				t.Errorf("AddServer to a new file: got no error, want one")
			}
			if tt.name != "duplicate" {
				if _, err := os.Stat(filepath.Dir(pathsOf(d).user)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("config directory: got %v, want it not created", err)
				}
			}
		})
	}
}

func TestAddServerReplace(t *testing.T) {
	d := newDirs(t)
	p := pathsOf(d)
	writeFile(t, p.user, "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, // about a\n    \"b\": {\"command\": \"b\"}\n  }\n}\n")
	if _, err := AddServer(d, ScopeGlobal, "a", Definition{Command: "new", Args: []string{"x"}}, true); err != nil {
		t.Fatal(err)
	}
	const want = "{\n  \"mcpServers\": {\n    \"a\": {\n      \"command\": \"new\",\n      \"args\": [\n        \"x\"\n      ]\n    }, // about a\n    \"b\": {\"command\": \"b\"}\n  }\n}\n"
	if diff := cmp.Diff(want, readString(t, p.user)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
}

func TestRemoveServerMissing(t *testing.T) {
	d := newDirs(t)
	p := pathsOf(d)
	const before = `{"mcpServers": {"a": {"command": "a"}}}`
	writeFile(t, p.user, before)
	if _, err := RemoveServer(d, ScopeGlobal, "b"); err == nil || !strings.Contains(err.Error(), `server "b" is not defined in `+p.user) {
		t.Errorf("RemoveServer: got %v, want not defined", err)
	}
	if got := readString(t, p.user); got != before {
		t.Errorf("file: got %q, want it untouched", got)
	}
	if _, err := RemoveServer(newDirs(t), ScopeGlobal, "b"); err == nil {
		t.Errorf("RemoveServer without a file: got no error, want one")
	}
}

func TestBrokenFileNotWritten(t *testing.T) {
	tests := []struct {
		name, text, message string
	}{
		{"syntax", "{\"mcpServers\": {\"x\": {\"command\": \"x\"}\n", "does not parse"},
		{"schema", `{"mcpServers": {"x": {"command": "x"}}, "settings": {"toolPrefix": 1}}`, "the result would be invalid"},
		{"unknown field", `{"mcpServers": {"x": {"command": "x"}}, "servers": {}}`, "the result would be invalid"},
		{"not an object", `[]`, "must hold a JSON object"},
		{"mcpServers not an object", `{"mcpServers": []}`, "mcpServers must be an object"},
	}
	ops := []struct {
		name string
		op   func(d Dirs) error
	}{
		{"add", func(d Dirs) error {
			_, err := AddServer(d, ScopeGlobal, "new", Definition{Command: "n"}, false)
			return err
		}},
		{"remove", func(d Dirs) error { _, err := RemoveServer(d, ScopeGlobal, "x"); return err }},
		{"disable", func(d Dirs) error { _, err := SetDisabled(d, ScopeGlobal, "shared", true); return err }},
	}
	for _, tt := range tests {
		for _, op := range ops {
			t.Run(tt.name+" "+op.name, func(t *testing.T) {
				d := newDirs(t)
				p := pathsOf(d)
				writeFile(t, p.shared, `{"mcpServers": {"shared": {"command": "s"}}}`)
				writeFile(t, p.user, tt.text)
				err := op.op(d)
				if err == nil {
					t.Fatalf("got no error, want one")
				}
				if !strings.Contains(err.Error(), tt.message) {
					t.Errorf("got %q, want it to contain %q", err, tt.message)
				}
				if got := readString(t, p.user); got != tt.text {
					t.Errorf("file: got %q, want it untouched", got)
				}
				if got := dirNames(t, filepath.Dir(p.user)); !cmp.Equal(got, []string{"config.json"}) {
					t.Errorf("directory: got %v, want only config.json", got)
				}
			})
		}
	}
}

func TestSetDisabled(t *testing.T) {
	const shared = `{"mcpServers": {
		"s": {"command": "s", "args": ["a"], "env": {"TOKEN": "${TOKEN}"}, "lifecycle": "eager"},
		"off": {"command": "off", "disabled": true, "searchKeywords": {"t": ["w"]}}
	}}`
	const ours = "{\n  \"mcpServers\": {\n    \"o\": {\n      \"command\": \"o\"\n    }\n  }\n}\n"
	tests := []struct {
		name     string
		server   string
		disabled bool
		user     string // the user file afterwards
		reverts  bool   // the reverse call gives back the user file as it was
		want     func(t *testing.T, c *Config, p paths)
	}{
		{
			name: "disable ours", server: "o", disabled: true, reverts: true,
			user: "{\n  \"mcpServers\": {\n    \"o\": {\n      \"command\": \"o\",\n      \"disabled\": true\n    }\n  }\n}\n",
			want: func(t *testing.T, c *Config, p paths) {
				if s := mustServer(t, c, "o"); !s.Disabled || s.DisabledBy != "" {
					t.Errorf("o: got disabled %v by %q, want disabled by its own definition", s.Disabled, s.DisabledBy)
				}
			},
		},
		{
			name: "enable ours (already enabled)", server: "o", disabled: false, user: ours,
			want: func(t *testing.T, c *Config, p paths) {},
		},
		{
			name: "disable shared", server: "s", disabled: true, reverts: true,
			user: "{\n  \"mcpServers\": {\n    \"o\": {\n      \"command\": \"o\"\n    },\n    \"s\": {\n      \"disabled\": true\n    }\n  }\n}\n",
			want: func(t *testing.T, c *Config, p paths) {
				s := mustServer(t, c, "s")
				if !s.Disabled || s.DisabledBy != p.user || s.Command != "s" || s.Source.Path != p.shared {
					t.Errorf("s: got disabled %v by %q, %q from %s; want disabled by the user file, the shared definition kept",
						s.Disabled, s.DisabledBy, s.Command, s.Source.Path)
				}
			},
		},
		{
			name: "enable shared (already enabled)", server: "s", disabled: false, user: ours,
			want: func(t *testing.T, c *Config, p paths) {},
		},
		{
			name: "enable a definition disabled in a shared file", server: "off", disabled: false,
			user: "{\n  \"mcpServers\": {\n    \"o\": {\n      \"command\": \"o\"\n    },\n    \"off\": {\n      \"command\": \"off\",\n      \"searchKeywords\": {\n        \"t\": [\n          \"w\"\n        ]\n      }\n    }\n  }\n}\n",
			want: func(t *testing.T, c *Config, p paths) {
				if s := mustServer(t, c, "off"); s.Disabled || s.Source.Path != p.user {
					t.Errorf("off: got disabled %v from %s, want enabled from the user file", s.Disabled, s.Source.Path)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDirs(t)
			p := pathsOf(d)
			writeFile(t, p.shared, shared)
			writeFile(t, p.user, ours)
			path, err := SetDisabled(d, ScopeGlobal, tt.server, tt.disabled)
			if err != nil || path != p.user {
				t.Fatalf("SetDisabled: got %q, %v, want %q", path, err, p.user)
			}
			if got := readString(t, p.shared); got != shared {
				t.Errorf("shared file: got %q, want it untouched", got)
			}
			if diff := cmp.Diff(tt.user, readString(t, p.user)); diff != "" {
				t.Errorf("user file (-want +got):\n%s", diff)
			}
			c := Load(d)
			noErrors(t, c)
			if s := mustServer(t, c, tt.server); s.Disabled != tt.disabled {
				t.Errorf("%s: got disabled %v, want %v", tt.server, s.Disabled, tt.disabled)
			}
			tt.want(t, c, p)

			// And back.
			if _, err := SetDisabled(d, ScopeGlobal, tt.server, !tt.disabled); err != nil {
				t.Fatal(err)
			}
			if got := readString(t, p.shared); got != shared {
				t.Errorf("shared file: got %q, want it untouched", got)
			}
			if tt.reverts && readString(t, p.user) != ours {
				t.Errorf("user file after the reverse: got %q, want %q", readString(t, p.user), ours)
			}
			if s := mustServer(t, Load(d), tt.server); s.Disabled == tt.disabled {
				t.Errorf("%s after the reverse: got disabled %v, want %v", tt.server, s.Disabled, !tt.disabled)
			}
		})
	}
}

func TestSetDisabledNoFile(t *testing.T) {
	// Enabling what is enabled changes nothing, not even by creating a file;
	// disabling creates our file with a stub.
	d := newDirs(t)
	p := pathsOf(d)
	writeFile(t, p.shared, `{"mcpServers": {"s": {"command": "s"}}}`)
	if _, err := SetDisabled(d, ScopeGlobal, "s", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p.user); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("user file: got %v, want none created", err)
	}
	if _, err := SetDisabled(d, ScopeGlobal, "s", true); err != nil {
		t.Fatal(err)
	}
	const want = "{\n  \"mcpServers\": {\n    \"s\": {\n      \"disabled\": true\n    }\n  }\n}\n"
	if got := readString(t, p.user); got != want {
		t.Errorf("user file: got %q, want %q", got, want)
	}
	if got := fileMode(t, p.user); got != 0o600 {
		t.Errorf("mode: got %v, want 0600", got)
	}
	if _, err := SetDisabled(d, ScopeGlobal, "nope", true); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("SetDisabled(nope): got %v, want ErrUnknownServer", err)
	}
}

func TestProjectWriteTrust(t *testing.T) {
	add := func(t *testing.T, d Dirs, name string) {
		t.Helper()
		if _, err := AddServer(d, ScopeProject, name, Definition{Command: name}, false); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("trusted stays trusted", func(t *testing.T) {
		d := newDirs(t)
		p := pathsOf(d)
		writeFile(t, p.projectShared, `{"mcpServers": {"shared": {"command": "s"}}}`)
		trust(t, d)
		add(t, d, "ours")
		c := Load(d)
		if !c.Project.Trusted {
			t.Fatalf("got untrusted after our own write, want trusted")
		}
		mustServer(t, c, "ours")
		if _, err := RemoveServer(d, ScopeProject, "ours"); err != nil {
			t.Fatal(err)
		}
		if !Load(d).Project.Trusted {
			t.Errorf("got untrusted after our own remove, want trusted")
		}
	})
	t.Run("untrusted stays untrusted", func(t *testing.T) {
		d := newDirs(t)
		add(t, d, "ours")
		if c := Load(d); c.Project.Trusted {
			t.Errorf("got trusted, want untrusted")
		}
	})
	t.Run("someone else's change is not blessed", func(t *testing.T) {
		d := newDirs(t)
		p := pathsOf(d)
		writeFile(t, p.projectShared, `{"mcpServers": {"shared": {"command": "s"}}}`)
		trust(t, d)
		writeFile(t, p.projectShared, `{"mcpServers": {"shared": {"command": "evil"}}}`)
		add(t, d, "ours")
		c := Load(d)
		if c.Project.Trusted || !c.Project.Changed {
			t.Errorf("got trusted %v, changed %v, want untrusted and changed", c.Project.Trusted, c.Project.Changed)
		}
	})
	t.Run("no project", func(t *testing.T) {
		d := newDirs(t)
		d.Project = ""
		if _, err := AddServer(d, ScopeProject, "x", Definition{Command: "x"}, false); err == nil || !strings.Contains(err.Error(), "no project directory") {
			t.Errorf("AddServer: got %v, want no project directory", err)
		}
	})
}

func TestDefinitionRoundTrip(t *testing.T) {
	// What Definition returns, written to our file, loads as the same server:
	// a written "type" stays written, and a "url" without one stays
	// without (TypeInferred: only it may fall back to legacy SSE).
	d := newDirs(t)
	p := pathsOf(d)
	writeFile(t, p.shared, `{"mcpServers": {
		"cli": {"command": "npx", "args": ["-y", "pkg"], "cwd": "/w", "env": {"TOKEN": "${TOKEN}"}, "lifecycle": "eager",
			"idleTimeout": 0, "requestTimeoutMs": 1500, "reconnect": {"automatic": true, "maxAttempts": 2, "baseDelayMs": 100},
			"includeTools": ["a*"], "excludeTools": ["ab"], "directTools": ["a1"], "searchKeywords": {"a": ["b"]}, "protocolVersion": "legacy"},
		"sse": {"type": "sse", "url": "https://h/sse", "headers": {"Authorization": "Bearer ${T}"}, "idleTimeout": 3, "directTools": true, "reconnect": {}},
		"http": {"type": "streamable-http", "url": "https://h/mcp", "directTools": false, "redirects": "follow-without-credentials"},
		"untyped": {"url": "https://h/u"},
		"plain": {"command": "p"}
	}}`)
	writeFile(t, p.user, `{"settings": {"idleTimeout": 7, "directTools": true}}`) // defaults stay defaults
	c := Load(d)
	noErrors(t, c)
	for _, s := range c.Servers {
		if _, err := AddServer(d, ScopeGlobal, s.Name, s.Definition(), false); err != nil {
			t.Fatalf("AddServer(%s): %v", s.Name, err)
		}
	}
	again := Load(d)
	noErrors(t, again)
	for _, s := range c.Servers {
		got := mustServer(t, again, s.Name)
		if got.Source.Path != p.user {
			t.Fatalf("%s: got source %s, want the user file", s.Name, got.Source.Path)
		}
		ignore := func(s Server) Server { s.Source, s.Path, s.line, s.col = Source{}, "", 0, 0; return s }
		if diff := cmp.Diff(ignore(*s), ignore(*got), cmp.AllowUnexported(Server{})); diff != "" {
			t.Errorf("%s (-shared +written):\n%s", s.Name, diff)
		}
	}
}
