package hosts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

// migrateFixture reads testdata/migrate/NAME.txtar: a host's file as
// setup left it ("before"), the servers Switchboard serves, what a
// migration reports, and the file after it.
type migrateFixture struct {
	host                           string
	servers                        []string
	before, after, report, comment string
}

func readMigrateFixture(t *testing.T, path string) migrateFixture {
	t.Helper()
	a, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSuffix(filepath.Base(path), ".txtar")
	host, _, _ := strings.Cut(name, "+")
	fx := migrateFixture{host: host, comment: string(a.Comment)}
	for _, f := range a.Files {
		switch f.Name {
		case "servers":
			fx.servers = strings.Fields(string(f.Data))
		case "before":
			fx.before = string(f.Data)
		case "after":
			fx.after = string(f.Data)
		case "report":
			fx.report = string(f.Data)
		default:
			t.Fatalf("%s: unknown section %q", path, f.Name)
		}
	}
	if fx.before == "" || fx.after == "" || len(fx.servers) == 0 {
		t.Fatalf("%s: needs servers, before and after", path)
	}
	return fx
}

// report renders what a migration says it does, as the fixtures write it.
func report(m *Migration) string {
	var b strings.Builder
	for _, t := range m.Turned {
		fmt.Fprintf(&b, "turned %s: %s\n", t.Path, t.How)
	}
	for _, n := range m.Off {
		fmt.Fprintf(&b, "off %s\n", n)
	}
	for _, k := range m.Kept {
		fmt.Fprintf(&b, "kept %s: %s\n", k.Name, k.Why)
	}
	return b.String()
}

// TestMigrate turns off, in a realistic file of each host, the servers
// Switchboard serves: the file becomes exactly "after" (so every byte
// outside the change stays), the file as it was is backed up with its
// mode, a second run changes nothing, and Undo puts the file back byte for
// byte.
func TestMigrate(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "migrate", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, path := range paths {
		fx := readMigrateFixture(t, path)
		covered[fx.host] = true
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			f := newSetupFile(t, fx.host)
			writeFile(t, f.path, fx.before)
			if err := os.Chmod(f.path, 0o640); err != nil {
				t.Fatal(err)
			}
			journal := filepath.Join(t.TempDir(), "state", "setup-changes.json")
			opts := MigrateOptions{Servers: fx.servers, Journal: journal}
			m, err := PlanMigrate(f.d, fx.host, opts)
			if err != nil {
				t.Fatal(err)
			}
			if m.Err != nil || m.File != f.path {
				t.Fatalf("plan: file %s, error %v; want %s and none", m.File, m.Err, f.path)
			}
			if diff := cmp.Diff(fx.report, report(m)); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			d := m.Diff()
			if !strings.HasPrefix(d, "diff "+f.path) || !strings.Contains(d, "\n-") {
				t.Errorf("diff: got %q, want a unified diff of %s", d, f.path)
			}
			if got := readString(t, f.path); got != fx.before {
				t.Fatalf("planning changed the file")
			}

			written, backup, err := m.Write(setupNow)
			if err != nil || !written || backup != f.path+setupBackup {
				t.Fatalf("write: got %v, %q, %v; want written, backed up to %s", written, backup, err, f.path+setupBackup)
			}
			if diff := cmp.Diff(fx.after, readString(t, f.path)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			if got := readString(t, backup); got != fx.before {
				t.Errorf("backup: got %q, want the file as it was", got)
			}
			for _, p := range []string{f.path, backup} {
				if got := fileMode(t, p); got != 0o640 {
					t.Errorf("%s: mode %v, want 0640 kept", filepath.Base(p), got)
				}
			}

			// Idempotent: a second run finds nothing to change, and writes
			// nothing, not even a backup.
			listing := f.dir()
			m2, err := PlanMigrate(f.d, fx.host, opts)
			if err != nil {
				t.Fatal(err)
			}
			if m2.Changes() || m2.Diff() != "" || len(m2.Turned) != 0 {
				t.Errorf("second plan: got changes %s", report(m2))
			}
			if written, backup, err := m2.Write(setupNow.Add(time.Minute)); written || backup != "" || err != nil {
				t.Errorf("second write: got %v, %q, %v; want nothing written", written, backup, err)
			}
			if got := f.dir(); !cmp.Equal(got, listing) {
				t.Errorf("directory after the second run: got %v, want %v", got, listing)
			}
			if got := readString(t, f.path); got != fx.after {
				t.Errorf("the second run changed the file")
			}

			// Undo restores the file byte for byte, once.
			c, err := Undo(journal, fx.host)
			if err != nil {
				t.Fatal(err)
			}
			if c.What != "migrate" || c.File != f.path || c.Backup != backup {
				t.Errorf("undo: got %+v, want the migration of %s", c, f.path)
			}
			if got := readString(t, f.path); got != fx.before {
				t.Errorf("after undo: got %q, want the file as it was", got)
			}
			if _, err := Undo(journal, fx.host); !errors.Is(err, ErrNothingToUndo) {
				t.Errorf("second undo: got %v, want ErrNothingToUndo", err)
			}
		})
	}
	if hosts := slices.Sorted(func(yield func(string) bool) {
		for h := range covered {
			if !yield(h) {
				return
			}
		}
	}); !slices.Equal(hosts, Names()) {
		t.Errorf("fixtures cover %v, want every host: %v", hosts, Names())
	}
}

// TestMigrateAfterSetup mounts Switchboard in a file that does not exist,
// migrates, then undoes both: the first Undo reverses the migration, the
// second removes the file setup created. Switchboard's own entry is never
// turned off, even when named.
func TestMigrateAfterSetup(t *testing.T) {
	f := newSetupFile(t, "cursor")
	journal := filepath.Join(t.TempDir(), "setup-changes.json")
	s, err := PlanSetup(f.d, "cursor", SetupOptions{Command: setupCommand, Journal: journal})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Write(false, setupNow); err != nil {
		t.Fatal(err)
	}
	mounted := readString(t, f.path)
	m, err := PlanMigrate(f.d, "cursor", MigrateOptions{Servers: []string{"switchboard"}, Journal: journal})
	if err != nil {
		t.Fatal(err)
	}
	if m.Changes() || len(m.Turned) != 0 {
		t.Errorf("migrating the mount itself: got %s, want nothing", report(m))
	}

	// Another server, added by hand after setup, is served now.
	withGitHub := strings.Replace(mounted, `"mcpServers": {`, `"mcpServers": {
    "github": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"] },`, 1)
	writeFile(t, f.path, withGitHub)
	m, err = PlanMigrate(f.d, "cursor", MigrateOptions{Servers: []string{"github", "switchboard"}, Journal: journal})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Write(setupNow.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, f.path); got != mounted {
		t.Errorf("after migrating github: got\n%s\nwant\n%s", got, mounted)
	}
	if c, err := Undo(journal, "cursor"); err != nil || c.What != "migrate" || readString(t, f.path) != withGitHub {
		t.Errorf("first undo: got %+v, %v; want the migration reversed", c, err)
	}
	// The file changed by hand since setup wrote it: the mount cannot be
	// undone without losing that.
	if _, err := Undo(journal, "cursor"); err == nil || !strings.Contains(err.Error(), "changed since setup wrote it") {
		t.Errorf("undo of a file changed since: got %v, want a refusal", err)
	}
	if readString(t, f.path) != withGitHub {
		t.Errorf("a refused undo changed the file")
	}
	writeFile(t, f.path, mounted)
	if c, err := Undo(journal, "cursor"); err != nil || c.What != "setup" || c.Backup != "" {
		t.Errorf("second undo: got %+v, %v; want the setup that created the file", c, err)
	}
	if _, err := os.Stat(f.path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after undoing the setup that created it, the file is still there: %v", err)
	}
}

// TestMigrateNothingToDo: no file, or a file without the servers, plans
// no change and a write writes nothing.
func TestMigrateNothingToDo(t *testing.T) {
	for _, host := range Names() {
		t.Run(host, func(t *testing.T) {
			f := newSetupFile(t, host)
			m, err := PlanMigrate(f.d, host, MigrateOptions{Servers: []string{"github"}})
			if err != nil {
				t.Fatal(err)
			}
			if written, _, err := m.Write(setupNow); written || err != nil || m.Changes() {
				t.Errorf("no file: got written %v, %v, %s", written, err, report(m))
			}
			if _, err := os.Stat(f.path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a migration without a file created one")
			}
		})
	}
}

// TestMigrateInvalid: a file that does not parse is not changed, and the
// error says where it is wrong without quoting it.
func TestMigrateInvalid(t *testing.T) {
	f := newSetupFile(t, "gemini")
	writeFile(t, f.path, "{\n  \"mcpServers\": {\"a\": \"sk-live-0123\n456\"}\n}\n")
	m, err := PlanMigrate(f.d, "gemini", MigrateOptions{Servers: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Err == nil || strings.Contains(m.Err.Error(), "sk-live") || !strings.Contains(m.Err.Error(), f.path+":2:") {
		t.Errorf("got %v, want an error with the position and without the text", m.Err)
	}
	if written, _, err := m.Write(setupNow); written || err == nil {
		t.Errorf("write: got %v, %v; want a refusal", written, err)
	}
}

func TestMigrateUnknown(t *testing.T) {
	if _, err := PlanMigrate(Dirs{Home: t.TempDir()}, "netscape", MigrateOptions{}); err == nil || !strings.Contains(err.Error(), `unknown host "netscape"`) {
		t.Errorf("got %v, want unknown host", err)
	}
	if _, err := PlanMigrate(Dirs{Home: t.TempDir()}, "cursor", MigrateOptions{Name: "a b"}); err == nil {
		t.Errorf("a bad name: got no error")
	}
}

// FuzzMigrate feeds host files, untrusted input, to a migration of the
// servers a, b and c, as Codex (TOML) and as Cursor (JSON with comments): a
// plan never panics, and a write either changes nothing or leaves a file
// that parses, differs only in those servers, and that a second plan finds
// nothing more to change in.
func FuzzMigrate(f *testing.F) {
	for _, s := range []string{
		"", "[mcp_servers.a]\ncommand = \"x\"\n", "[mcp_servers.a]\nenabled = true # c\n[mcp_servers.a.env]\nX = \"1\"\n",
		"[mcp_servers]\nb = { command = \"y\" }\n[mcp_servers.a]", "[mcp_servers.c]\nenabled = false\n",
		`{"mcpServers": {"a": {"command": "x"}, "b": {"url": "u"}}}`, "{\n  // c\n  \"mcpServers\": {\n    \"a\": {},\n  },\n}\n",
		`{"mcpServers": {"c": 1, "a": {"command": "x"}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		for _, host := range []string{"codex", "cursor"} {
			home := t.TempDir()
			d := Dirs{Home: home}
			path := filepath.Join(home, filepath.FromSlash(setupFiles[host]))
			writeFile(t, path, data)
			opts := MigrateOptions{Servers: []string{"a", "b", "c"}}
			m, err := PlanMigrate(d, host, opts)
			if err != nil {
				t.Fatal(err)
			}
			written, _, err := m.Write(setupNow)
			got := readString(t, path)
			if !written {
				if got != data {
					t.Fatalf("%s: not written (%v), yet the file changed", host, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: written, but %v", host, err)
			}
			m2, err := PlanMigrate(d, host, opts)
			if err != nil || m2.Err != nil || m2.Changes() {
				t.Fatalf("%s: after a migration of %q to %q, a second plan: %v, %v, %s", host, data, got, err, m2.Err, report(m2))
			}
		}
	})
}
