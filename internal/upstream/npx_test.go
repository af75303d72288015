package upstream

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/switchboard-mcp/switchboard/config"
)

func TestParseNpx(t *testing.T) {
	tests := []struct {
		args []string
		want *npxCall // nil: not resolved
	}{
		{[]string{"-y", "pkg"}, &npxCall{spec: "pkg", name: "pkg", args: []string{}}},
		{[]string{"--yes", "-q", "pkg@1.2.3", "a", "-y"}, &npxCall{spec: "pkg@1.2.3", name: "pkg", version: "1.2.3", args: []string{"a", "-y"}}},
		{[]string{"@s/pkg@1.0.0-rc.1", "--port", "3"}, &npxCall{spec: "@s/pkg@1.0.0-rc.1", name: "@s/pkg", version: "1.0.0-rc.1", args: []string{"--port", "3"}}},
		{[]string{"--quiet", "--no-install", "@s/pkg"}, &npxCall{spec: "@s/pkg", name: "@s/pkg", args: []string{}}},
		{[]string{"-y", "--", "pkg", "--", "x"}, &npxCall{spec: "pkg", name: "pkg", args: []string{"--", "x"}}},
		{[]string{"pkg", "stdio"}, &npxCall{spec: "pkg", name: "pkg", args: []string{"stdio"}}},
		// What changes what runs, or where it comes from.
		{[]string{"-p", "pkg", "bin"}, nil},
		{[]string{"--package=pkg", "bin"}, nil},
		{[]string{"-c", "bin"}, nil},
		{[]string{"--call", "bin"}, nil},
		{[]string{"--cache", "/tmp/c", "pkg@1.0.0"}, nil},
		{[]string{"--registry=https://evil.example", "pkg@1.0.0"}, nil},
		{[]string{"-yq", "pkg"}, nil},
		{[]string{"--yes=true", "pkg"}, nil},
		// Specs that are not an installed package at an exact version.
		{[]string{"pkg@latest"}, nil},
		{[]string{"pkg@^1.2.3"}, nil},
		{[]string{"pkg@1"}, nil},
		{[]string{"pkg@1.2.x"}, nil},
		{[]string{"pkg@v1.2.3"}, nil},
		{[]string{"pkg@1.2.3+build"}, nil},
		{[]string{"pkg@01.2.3"}, nil},
		{[]string{"alias@npm:pkg@1.0.0"}, nil},
		{[]string{"github:user/repo"}, nil},
		{[]string{"user/repo"}, nil},
		{[]string{"./dir"}, nil},
		{[]string{"../pkg"}, nil},
		{[]string{".."}, nil},
		{[]string{"/abs/dir"}, nil},
		{[]string{"file:../x"}, nil},
		{[]string{"https://example.com/x.tgz"}, nil},
		{[]string{"@s/../../x"}, nil},
		{[]string{"@s/a/b"}, nil},
		{[]string{"@/pkg"}, nil},
		{[]string{"@s"}, nil},
		{[]string{".hidden"}, nil},
		{[]string{"_private"}, nil},
		{[]string{"pkg@"}, nil},
		{[]string{""}, nil},
		{[]string{strings.Repeat("a", 215)}, nil},
		{[]string{"-y"}, nil},
		{[]string{"--"}, nil},
		{nil, nil},
	}
	for _, tt := range tests {
		got, ok := parseNpx(tt.args)
		if tt.want == nil {
			if ok {
				t.Errorf("parseNpx(%q) = %+v, want not resolved", tt.args, got)
			}
			continue
		}
		if !ok {
			t.Errorf("parseNpx(%q) not resolved, want %+v", tt.args, *tt.want)
			continue
		}
		if diff := cmp.Diff(*tt.want, got, cmp.AllowUnexported(npxCall{})); diff != "" {
			t.Errorf("parseNpx(%q) (-want +got):\n%s", tt.args, diff)
		}
	}
}

func FuzzParseNpx(f *testing.F) {
	f.Add("-y\x00@s/pkg@1.2.3\x00stdio")
	f.Add("--\x00pkg\x00--")
	f.Add("pkg@latest")
	f.Add("-p\x00pkg")
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		c, ok := parseNpx(args)
		if !ok {
			return
		}
		// A resolved name never leaves node_modules, and the bin's
		// arguments are the tail of npx's.
		for _, part := range strings.Split(c.name, "/") {
			if part == "." || part == ".." || part == "" || strings.ContainsAny(part, `\:`) {
				t.Errorf("name %q has part %q", c.name, part)
			}
		}
		if strings.Count(c.name, "/") > 1 || (strings.Contains(c.name, "/") != strings.HasPrefix(c.name, "@")) {
			t.Errorf("name %q is not a package name", c.name)
		}
		if c.version != "" && !exactVersion().MatchString(c.version) {
			t.Errorf("version %q is not exact", c.version)
		}
		if len(c.args) > len(args) || (len(c.args) > 0 && &c.args[len(c.args)-1] != &args[len(args)-1]) {
			t.Errorf("args %q are not the tail of %q", c.args, args)
		}
	})
}

// A layout is a fake file tree: paths to contents; a content starting
// with "->" is a symbolic link to the rest.
type layout map[string]string

func (l layout) write(t *testing.T, root string) {
	t.Helper()
	for path, content := range l {
		p := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func pkgJSON(name, version string, bin any) string {
	b, _ := json.Marshal(map[string]any{"name": name, "version": version, "bin": bin})
	return string(b)
}

const nodeBin = "#!/usr/bin/env node\nconsole.log('hi')\n"

// TestResolveNpx holds the decision: which npx lines run an installed
// bin, and which run npx as written (every case where npx would ask the
// registry, run something else, or the bin is not the package's own).
func TestResolveNpx(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("npx is not resolved on Windows")
	}
	node, err := lookPath("node", "", os.Environ())
	if err != nil {
		t.Skip("no node in PATH")
	}
	const npxHash = "ffbdb88664f07cd8" // npx's directory for "foo@1.2.3": sha512 hex, first 16
	tests := []struct {
		name   string
		files  layout
		cwd    string // under the root
		args   []string
		env    []string // beside PATH and HOME=<root>/home
		want   string   // the bin, under the root; "" for npx as written
		direct bool     // the bin runs itself, not under node
	}{
		{name: "local exact", files: layout{
			"p/package.json":                  `{}`,
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "cli.js"),
			"p/node_modules/foo/cli.js":       nodeBin,
		}, cwd: "p", args: []string{"-y", "foo@1.2.3", "stdio"}, want: "p/node_modules/foo/cli.js"},
		{name: "local from a subdirectory", files: layout{
			"p/package.json":                  `{}`,
			"p/src/x/.keep":                   "",
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", map[string]string{"foo": "bin/foo.js", "other": "o.js"}),
			"p/node_modules/foo/bin/foo.js":   nodeBin,
		}, cwd: "p/src/x", args: []string{"foo@1.2.3"}, want: "p/node_modules/foo/bin/foo.js"},
		{name: "the nearest package.json is the project", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "cli.js"),
			"p/node_modules/foo/cli.js":       nodeBin,
			"p/sub/package.json":              `{}`,
		}, cwd: "p/sub", args: []string{"foo@1.2.3"}},
		{name: "local scoped, only bin", files: layout{
			"p/node_modules/@s/foo/package.json":  pkgJSON("@s/foo", "2.0.0", map[string]string{"foo-server": "dist/index.js"}),
			"p/node_modules/@s/foo/dist/index.js": nodeBin,
		}, cwd: "p", args: []string{"-y", "@s/foo@2.0.0"}, want: "p/node_modules/@s/foo/dist/index.js"},
		{name: "local name alone", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "0.0.1", "cli.js"),
			"p/node_modules/foo/cli.js":       nodeBin,
			"p/node_modules/.bin/foo":         "->../foo/cli.js",
		}, cwd: "p", args: []string{"foo"}, want: "p/node_modules/foo/cli.js"},
		{name: "name alone, another package's bin of that name", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "0.0.1", "cli.js"),
			"p/node_modules/foo/cli.js":       nodeBin,
			"p/node_modules/bar/b.js":         nodeBin,
			"p/node_modules/.bin/foo":         "->../bar/b.js",
		}, cwd: "p", args: []string{"foo"}},
		{name: "name alone, a bin of that name further up", files: layout{
			"node_modules/.bin/foo":           nodeBin,
			"p/node_modules/foo/package.json": pkgJSON("foo", "0.0.1", "cli.js"),
			"p/node_modules/foo/cli.js":       nodeBin,
		}, cwd: "p", args: []string{"foo"}},
		{name: "name alone, the project's own bin", files: layout{
			"p/package.json":                  `{"bin":{"foo":"mine.js"}}`,
			"p/node_modules/foo/package.json": pkgJSON("foo", "0.0.1", "cli.js"),
			"p/node_modules/foo/cli.js":       nodeBin,
		}, cwd: "p", args: []string{"foo"}},
		{name: "name alone, the project's own lone bin", files: layout{
			"p/package.json":                  `{"name":"foo","bin":"mine.js"}`,
			"p/node_modules/foo/package.json": pkgJSON("foo", "0.0.1", "cli.js"),
			"p/node_modules/foo/cli.js":       nodeBin,
		}, cwd: "p", args: []string{"foo"}},
		{name: "name alone, another project", files: layout{
			"p/package.json":                  `{"name":"bar","bin":"mine.js"}`,
			"p/node_modules/foo/package.json": pkgJSON("foo", "0.0.1", "cli.js"),
			"p/node_modules/foo/cli.js":       nodeBin,
		}, cwd: "p", args: []string{"foo"}, want: "p/node_modules/foo/cli.js"},
		{name: "local version differs", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.4", "cli.js"),
			"p/node_modules/foo/cli.js":       nodeBin,
		}, cwd: "p", args: []string{"foo@1.2.3"}},
		{name: "local name differs", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("bar", "1.2.3", "cli.js"),
			"p/node_modules/foo/cli.js":       nodeBin,
		}, cwd: "p", args: []string{"foo@1.2.3"}},
		{name: "tag", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "cli.js"),
			"p/node_modules/foo/cli.js":       nodeBin,
		}, cwd: "p", args: []string{"foo@latest"}},
		{name: "range", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "cli.js"),
			"p/node_modules/foo/cli.js":       nodeBin,
		}, cwd: "p", args: []string{"foo@^1.2.0"}},
		{name: "-p changes what runs", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "cli.js"),
			"p/node_modules/foo/cli.js":       nodeBin,
		}, cwd: "p", args: []string{"-p", "foo@1.2.3", "foo"}},
		{name: "turned off in env", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "cli.js"),
			"p/node_modules/foo/cli.js":       nodeBin,
		}, cwd: "p", args: []string{"foo@1.2.3"}, env: []string{"SWITCHBOARD_NPX_RESOLVE=0"}},
		{name: "bin escapes the package", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "../bar/cli.js"),
			"p/node_modules/bar/cli.js":       nodeBin,
		}, cwd: "p", args: []string{"foo@1.2.3"}},
		{name: "bin is an absolute path", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "/bin/sh"),
		}, cwd: "p", args: []string{"foo@1.2.3"}},
		{name: "bin links out of the package", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "cli.js"),
			"p/node_modules/foo/cli.js":       "->../../evil.js",
			"p/evil.js":                       nodeBin,
		}, cwd: "p", args: []string{"foo@1.2.3"}},
		{name: "bin missing", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "cli.js"),
		}, cwd: "p", args: []string{"foo@1.2.3"}},
		{name: "bin is a directory", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "cli"),
			"p/node_modules/foo/cli/x":        nodeBin,
		}, cwd: "p", args: []string{"foo@1.2.3"}},
		{name: "several bins, none named for the package", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", map[string]string{"a": "a.js", "b": "b.js"}),
			"p/node_modules/foo/a.js":         nodeBin,
			"p/node_modules/foo/b.js":         nodeBin,
		}, cwd: "p", args: []string{"foo@1.2.3"}},
		{name: "no bin", files: layout{
			"p/node_modules/foo/package.json": `{"name":"foo","version":"1.2.3"}`,
		}, cwd: "p", args: []string{"foo@1.2.3"}},
		{name: "no shebang", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "cli.js"),
			"p/node_modules/foo/cli.js":       "console.log('hi')\n",
		}, cwd: "p", args: []string{"foo@1.2.3"}},
		{name: "another interpreter runs itself", files: layout{
			"p/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "cli.sh"),
			"p/node_modules/foo/cli.sh":       "#!/bin/sh\necho hi\n",
		}, cwd: "p", args: []string{"foo@1.2.3"}, want: "p/node_modules/foo/cli.sh", direct: true},
		{name: "npx cache exact", files: layout{
			"home/.npm/_npx/" + npxHash + "/node_modules/.package-lock.json": `{}`,
			"home/.npm/_npx/" + npxHash + "/node_modules/foo/package.json":   pkgJSON("foo", "1.2.3", "cli.js"),
			"home/.npm/_npx/" + npxHash + "/node_modules/foo/cli.js":         nodeBin,
			"p/.keep": "",
		}, cwd: "p", args: []string{"-y", "foo@1.2.3"}, want: "home/.npm/_npx/" + npxHash + "/node_modules/foo/cli.js"},
		{name: "npx cache under npm_config_cache", files: layout{
			"c/_npx/" + npxHash + "/node_modules/.package-lock.json": `{}`,
			"c/_npx/" + npxHash + "/node_modules/foo/package.json":   pkgJSON("foo", "1.2.3", "cli.js"),
			"c/_npx/" + npxHash + "/node_modules/foo/cli.js":         nodeBin,
			"p/.keep": "",
		}, cwd: "p", args: []string{"foo@1.2.3"}, env: []string{"npm_config_cache=<root>/c"}, want: "c/_npx/" + npxHash + "/node_modules/foo/cli.js"},
		{name: "npx cache, local version differs", files: layout{
			"p/node_modules/foo/package.json":                                pkgJSON("foo", "1.0.0", "cli.js"),
			"p/node_modules/foo/cli.js":                                      nodeBin,
			"home/.npm/_npx/" + npxHash + "/node_modules/.package-lock.json": `{}`,
			"home/.npm/_npx/" + npxHash + "/node_modules/foo/package.json":   pkgJSON("foo", "1.2.3", "cli.js"),
			"home/.npm/_npx/" + npxHash + "/node_modules/foo/cli.js":         nodeBin,
		}, cwd: "p", args: []string{"foo@1.2.3"}, want: "home/.npm/_npx/" + npxHash + "/node_modules/foo/cli.js"},
		{name: "npx cache, install not finished", files: layout{
			"home/.npm/_npx/" + npxHash + "/node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "cli.js"),
			"home/.npm/_npx/" + npxHash + "/node_modules/foo/cli.js":       nodeBin,
			"p/.keep": "",
		}, cwd: "p", args: []string{"foo@1.2.3"}},
		{name: "npx cache, another spec's directory", files: layout{
			"home/.npm/_npx/0123456789abcdef/node_modules/.package-lock.json": `{}`,
			"home/.npm/_npx/0123456789abcdef/node_modules/foo/package.json":   pkgJSON("foo", "1.2.3", "cli.js"),
			"home/.npm/_npx/0123456789abcdef/node_modules/foo/cli.js":         nodeBin,
			"p/.keep": "",
		}, cwd: "p", args: []string{"foo@1.2.3"}},
		{name: "npx cache, name alone asks the registry", files: layout{
			"home/.npm/_npx/" + npxHash + "/node_modules/.package-lock.json": `{}`,
			"home/.npm/_npx/" + npxHash + "/node_modules/foo/package.json":   pkgJSON("foo", "1.2.3", "cli.js"),
			"home/.npm/_npx/" + npxHash + "/node_modules/foo/cli.js":         nodeBin,
			"p/.keep": "",
		}, cwd: "p", args: []string{"foo"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tt.files.write(t, root)
			env := []string{"PATH=" + filepath.Dir(node), "HOME=" + filepath.Join(root, "home")}
			for _, kv := range tt.env {
				env = append(env, strings.ReplaceAll(kv, "<root>", root))
			}
			got, ok := resolveNpx("npx", tt.args, filepath.Join(root, tt.cwd), env)
			if tt.want == "" {
				if ok {
					t.Fatalf("resolveNpx = %+v, want npx as written", got)
				}
				return
			}
			if !ok {
				t.Fatalf("resolveNpx: npx as written, want %s", tt.want)
			}
			bin, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(tt.want)))
			if err != nil {
				t.Fatal(err)
			}
			call, _ := parseNpx(tt.args)
			want := npxTarget{path: node, args: append([]string{bin}, call.args...), bin: bin}
			if tt.direct {
				want = npxTarget{path: bin, args: call.args, bin: bin}
			}
			got.pkg = ""
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(npxTarget{})); diff != "" {
				t.Errorf("resolveNpx (-want +got):\n%s", diff)
			}
		})
	}
}

// TestResolveNpxOnlyNpx: other commands, and npx as a relative path, are
// never resolved.
func TestResolveNpxOnlyNpx(t *testing.T) {
	root := t.TempDir()
	layout{
		"node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "cli.sh"),
		"node_modules/foo/cli.sh":       "#!/bin/sh\n",
	}.write(t, root)
	for _, cmd := range []string{"node", "bunx", "npx.cmd", "./npx", "bin/npx", "npm"} {
		if got, ok := resolveNpx(cmd, []string{"foo@1.2.3"}, root, nil); ok {
			t.Errorf("resolveNpx(%q) = %+v, want not resolved", cmd, got)
		}
	}
	if _, ok := resolveNpx("/usr/local/bin/npx", []string{"foo@1.2.3"}, root, nil); !ok && runtime.GOOS != "windows" {
		t.Errorf("resolveNpx(/usr/local/bin/npx) not resolved")
	}
}

// TestNpxFallsBack: when the installed bin does not start (here its
// interpreter does not exist), npx runs as written.
func TestNpxFallsBack(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("npx is not resolved on Windows")
	}
	root := t.TempDir()
	layout{
		"node_modules/foo/package.json": pkgJSON("foo", "1.2.3", "cli.sh"),
		"node_modules/foo/cli.sh":       "#!/nonexistent/interpreter\n",
		"npx/npx":                       "#!/bin/sh\necho \"npx ran: $*\"\n",
	}.write(t, root)
	npx := filepath.Join(root, "npx", "npx")
	args := []string{"-y", "foo@1.2.3", "a"}
	if _, ok := resolveNpx(npx, args, root, nil); !ok {
		t.Fatal("resolveNpx: not resolved; the test needs a resolved bin that does not start")
	}
	s := &config.Server{Name: "f", Command: npx, Args: args, Cwd: root}
	var logs strings.Builder
	p, err := startProcess(s, []string{"PATH=/usr/bin:/bin"}, procOptions{terminate: time.Second, log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("startProcess: %v", err)
	}
	defer p.close()
	out, _ := io.ReadAll(p.stdout)
	if got, want := string(out), "npx ran: -y foo@1.2.3 a\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if !strings.Contains(logs.String(), "running npx as written") {
		t.Errorf("log = %q, want the fallback said", logs.String())
	}
}
