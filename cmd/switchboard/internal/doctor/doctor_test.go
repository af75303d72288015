package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

func TestMain(m *testing.M) {
	testserver.Main()
	os.Exit(m.Run())
}

// home writes our own configuration (raw text) into a new home and loads it.
func home(t *testing.T, raw string) (config.Dirs, *config.Config) {
	t.Helper()
	d := config.Dirs{Home: t.TempDir()}
	if raw != "" {
		write(t, d.UserFile(), raw)
	}
	return d, config.Load(d)
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func servers(t *testing.T, defs map[string]any) string {
	b, err := json.Marshal(map[string]any{"mcpServers": defs})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// only returns the findings of one check.
func only(fs []Finding, check string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Check == check {
			out = append(out, f)
		}
	}
	return out
}

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func want(t *testing.T, fs []Finding, sev Severity, parts ...string) Finding {
	t.Helper()
	for _, f := range fs {
		text := f.What + "|" + f.Where + "|" + f.Fix
		ok := f.Severity == sev
		for _, p := range parts {
			ok = ok && strings.Contains(text, p)
		}
		if ok {
			return f
		}
	}
	t.Fatalf("no %s finding with %q among %+v", sev, parts, fs)
	return Finding{}
}

func TestConfigCheck(t *testing.T) {
	_, cfg := home(t, "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n    \"b\": 1\n}")
	fs := only(Run(t.Context(), Options{Config: cfg}), CheckConfig)
	f := want(t, fs, Error, "config.json:4:")
	if !strings.Contains(f.Fix, "switchboard config validate") {
		t.Errorf("fix %q", f.Fix)
	}
	_, cfg = home(t, servers(t, map[string]any{"a": map[string]any{"command": "x"}}))
	want(t, only(Run(t.Context(), Options{Config: cfg}), CheckConfig), OK, "1 servers defined, no problems")
}

func TestReferenceCheck(t *testing.T) {
	d, cfg := home(t, servers(t, map[string]any{
		"a": map[string]any{"command": "x", "env": map[string]string{"TOKEN": "${A_TOKEN}", "MODE": "${A_MODE:-fast}"}},
		"b": map[string]any{"url": "http://127.0.0.1:1/mcp", "headers": map[string]string{"Authorization": "Bearer ${secret:b_key}"}},
		"c": map[string]any{"command": "x", "env": map[string]string{"TOKEN": "${C_TOKEN}"}, "disabled": true},
	}))
	store := credstore.NewFile(d.StateDir())
	fs := only(Run(t.Context(), Options{Config: cfg, Secrets: store}), CheckReference)
	f := want(t, fs, Error, "${A_TOKEN}", "mcpServers.a.env.TOKEN", "switchboard secret set A_TOKEN")
	if f.Server != "a" {
		t.Errorf("server %q", f.Server)
	}
	want(t, fs, Error, "${secret:b_key}", "not in the credential store", "switchboard secret set b_key")
	if len(fs) != 2 {
		t.Errorf("findings %+v, want 2 (a default and a disabled server are fine)", fs)
	}
	if err := store.Set(credstore.SecretKey("b_key"), []byte("hunter2-secret")); err != nil {
		t.Fatal(err)
	}
	fs = only(Run(t.Context(), Options{Config: cfg, Secrets: store, LookupEnv: env(map[string]string{"A_TOKEN": "tok-value-1"})}), CheckReference)
	want(t, fs, OK, "3 references, all set")
	for _, f := range fs {
		if strings.Contains(f.What+f.Where+f.Fix, "hunter2") || strings.Contains(f.What+f.Where+f.Fix, "tok-value") {
			t.Errorf("a value shown: %+v", f)
		}
	}
}

func TestCommandCheck(t *testing.T) {
	bin := t.TempDir()
	_, cfg := home(t, servers(t, map[string]any{"gh": map[string]any{"command": "npx", "args": []string{"-y", "pkg"}},
		"local": map[string]any{"command": "./run-me"}}))
	fs := only(Run(t.Context(), Options{Config: cfg, LookupEnv: env(map[string]string{"PATH": bin})}), CheckCommand)
	want(t, fs, Error, `runs "npx": not found on PATH`, "mcpServers.gh.command", "install Node.js")
	want(t, fs, Error, `runs "./run-me"`, "no such file", "full path")

	if runtime.GOOS == "windows" {
		return
	}
	write(t, filepath.Join(bin, "npx"), "#!/bin/sh\necho 10.9.2\n")
	os.Chmod(filepath.Join(bin, "npx"), 0o755)
	fs = only(Run(t.Context(), Options{Config: cfg, LookupEnv: env(map[string]string{"PATH": bin})}), CheckCommand)
	want(t, fs, OK, "npx is "+filepath.Join(bin, "npx"), "(10.9.2)")
}

func TestHostCheck(t *testing.T) {
	d, cfg := home(t, servers(t, map[string]any{"github": map[string]any{"command": "x"}, "fetch": map[string]any{"command": "y"}}))
	// Cursor mounts Switchboard and still loads github itself.
	write(t, filepath.Join(d.Home, ".cursor", "mcp.json"), `{"mcpServers": {
		"switchboard": {"type": "stdio", "command": "switchboard", "args": ["serve"]},
		"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]},
		"other": {"command": "z"}}}`)
	// Windsurf has a file without Switchboard.
	write(t, filepath.Join(d.Home, ".codeium", "windsurf", "mcp_config.json"), `{"mcpServers": {"github": {"command": "npx"}}}`)
	fs := Run(t.Context(), Options{Config: cfg})
	want(t, only(fs, CheckHost), OK, `Cursor mounts Switchboard as "switchboard", as setup writes it`)
	other := only(Run(t.Context(), Options{Config: cfg, SetupCommand: "/opt/bin/switchboard"}), CheckHost)
	want(t, other, OK, `Cursor mounts Switchboard as "switchboard", with an entry of its own`)
	want(t, only(fs, CheckHost), Info, "Windsurf does not mount Switchboard", "switchboard setup windsurf --write")
	dups := only(fs, CheckDuplicate)
	want(t, dups, Warning, `Cursor loads "github" itself and through Switchboard`, "switchboard setup cursor --migrate --write")
	if len(dups) != 1 {
		t.Errorf("duplicates %+v, want only github in Cursor", dups)
	}
	// Without the duplicate, nothing to say.
	write(t, filepath.Join(d.Home, ".cursor", "mcp.json"), `{"mcpServers": {"switchboard": {"command": "switchboard", "args": ["serve"]}}}`)
	if dups := only(Run(t.Context(), Options{Config: config.Load(d)}), CheckDuplicate); len(dups) != 0 {
		t.Errorf("duplicates %+v, want none", dups)
	}
}

func TestDirectoryCheck(t *testing.T) {
	d, cfg := home(t, "")
	blocker := filepath.Join(d.Home, "file")
	write(t, blocker, "not a directory")
	fs := only(Run(t.Context(), Options{Config: cfg, SpillDir: filepath.Join(blocker, "spill")}), CheckDirectory)
	want(t, fs, Error, "the spill directory cannot be written", "not a directory")
	want(t, fs, OK, "the state directory can be written")
	want(t, fs, OK, "the cache directory can be written")
	if _, err := os.Stat(d.StateDir()); err == nil {
		t.Errorf("doctor made the state directory")
	}
}

func TestCatalogCheck(t *testing.T) {
	_, cfg := home(t, "")
	path := filepath.Join(t.TempDir(), "catalog.db")
	want(t, only(Run(t.Context(), Options{Config: cfg, CatalogPath: path}), CheckCatalog), Info, "no catalog yet")
	cat, err := catalog.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	cat.Close()
	want(t, only(Run(t.Context(), Options{Config: cfg, CatalogPath: path}), CheckCatalog), OK, "integrity check")
	// Damage the file past its header.
	data, _ := os.ReadFile(path)
	for i := 100; i < len(data); i += 7 {
		data[i] ^= 0x5a
	}
	os.WriteFile(path, data, 0o600)
	want(t, only(Run(t.Context(), Options{Config: cfg, CatalogPath: path}), CheckCatalog), Error, "the catalog is damaged", "switchboard index")
}

func TestConnectCheck(t *testing.T) {
	good, goodArgs, goodEnv := testserver.Command(testserver.Good)
	bad, badArgs, badEnv := testserver.Command(testserver.ExitAtStart)
	_, cfg := home(t, servers(t, map[string]any{
		"good": map[string]any{"command": good, "args": goodArgs, "env": goodEnv},
		"bad":  map[string]any{"command": bad, "args": badArgs, "env": badEnv},
	}))
	fs := Run(context.Background(), Options{Config: cfg, Connect: true})
	c := only(fs, CheckConnect)
	want(t, c, OK, `"good" connects:`, "tools")
	want(t, c, Error, `"bad" does not connect`, "Cannot find module", "switchboard logs --server bad")
	if n := len(only(Run(t.Context(), Options{Config: cfg}), CheckConnect)); n != 0 {
		t.Errorf("without Connect: %d connect findings", n)
	}
}

// TestConnectRefusedNamesURL: an HTTP server that refuses the connection
// has no stderr to read: the fix names its URL (issue 30).
func TestConnectRefusedNamesURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	ln.Close() // nothing listens there now: the connection is refused
	_, cfg := home(t, servers(t, map[string]any{"web": map[string]any{"url": url}}))
	c := only(Run(t.Context(), Options{Config: cfg, Connect: true}), CheckConnect)
	f := want(t, c, Error, `"web" does not connect`, "is the server at "+url+" running")
	if strings.Contains(f.Fix, "switchboard logs") {
		t.Errorf("fix: got %q, want no stderr logs for an HTTP server", f.Fix)
	}
}

// TestCheckStore: with settings.store, doctor says where the shared store
// is and that it answers, or why it cannot be used, as an error.
func TestCheckStore(t *testing.T) {
	cfg := &config.Config{}
	if fs := only(Run(t.Context(), Options{Config: cfg}), CheckStore); len(fs) != 0 {
		t.Errorf("without settings.store: %v, want no finding", fs)
	}
	want(t, only(Run(t.Context(), Options{Config: cfg, Store: &StoreState{Where: "PostgreSQL store (database d on 127.0.0.1:5432)", Schema: "credentials 1"}}), CheckStore),
		OK, "PostgreSQL store (database d on 127.0.0.1:5432), answers", "credentials 1")
	want(t, only(Run(t.Context(), Options{Config: cfg, Store: &StoreState{Err: errors.New("settings.store.postgres: the variable DATABASE_URL is not set")}}), CheckStore),
		Error, "cannot be used", "DATABASE_URL is not set", "docs/configuration.md, Shared store")
}
