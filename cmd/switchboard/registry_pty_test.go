//go:build unix

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/switchboard-mcp/switchboard/internal/testkit/registrytest"
)

// TestRegistryAddAsksSecret: add from the registry asks the secret on the
// terminal without echo, stores it, and writes only its reference; the
// required value with a default shows the default, which Enter takes.
func TestRegistryAddAsksSecret(t *testing.T) {
	base := registrytest.Start(t, registrySeed("https://example.com/mcp", "https://example.com/b.mcpb")...)
	home := t.TempDir()
	dir := filepath.Join(home, ".config", "switchboard")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"settings": map[string]any{"registry": base, "credentialStore": "file"}})
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Skip("skipped: no npx on PATH")
	}
	cmd := switchboardCmd(t, home, "add", "io.github.switchboard-test/memory-secret")
	cmd.Env = append(cmd.Env, "PATH="+filepath.Dir(npx))
	ptmx, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	term := newTerminal(ptmx)
	at := term.waitFor(t, 0, "(not shown; kept as MEMORY_SECRET_MEMORY_API_TOKEN): ")
	term.send(t, "canary-secret-value\r")
	at = term.waitFor(t, at, "stored secret MEMORY_SECRET_MEMORY_API_TOKEN")
	at = term.waitFor(t, at, "[eu]: ")
	term.send(t, "\r")
	term.waitFor(t, at, "added \"memory-secret\"")
	if code := exitCode(t, cmd); code != 0 {
		t.Fatalf("add exited %d; the terminal showed:\n%s", code, term.out.String())
	}
	term.mu.Lock()
	shown := term.out.String()
	term.mu.Unlock()
	if strings.Contains(shown, "canary-secret-value") {
		t.Errorf("the secret was echoed on the terminal:\n%s", shown)
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, "config.json"))
	if strings.Contains(string(cfg), "canary-secret-value") || !strings.Contains(string(cfg), `"MEMORY_API_TOKEN": "${secret:MEMORY_SECRET_MEMORY_API_TOKEN}"`) ||
		!strings.Contains(string(cfg), `"MEMORY_REGION": "eu"`) {
		t.Errorf("config: got\n%s\nwant the secret's reference and the default region", cfg)
	}
	list := switchboardCmd(t, home, "secret", "list")
	out, err := list.Output()
	if err != nil || !strings.Contains(string(out), "MEMORY_SECRET_MEMORY_API_TOKEN") {
		t.Errorf("secret list: %v, %s", err, out)
	}
}
