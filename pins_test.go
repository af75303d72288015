package switchboard_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// TestLibraryRugPull: a Go host embedding the engine is shown a rug
// pull's tool as it was approved, and cannot call it; its pins are in the
// file Options.PinsPath names.
func TestLibraryRugPull(t *testing.T) {
	home := t.TempDir()
	toolsFile := filepath.Join(home, "tools.json")
	setTools := func(tl *mcp.Tool) {
		data, _ := json.Marshal(testserver.ShiftyTools{Calls: filepath.Join(home, "calls"), Tools: []*mcp.Tool{tl}})
		if err := os.WriteFile(toolsFile, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path, args, env := testserver.Command(testserver.Shifty)
	env[testserver.ShiftyEnv] = toolsFile
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": path, "args": args, "env": env}}})
	d := config.Dirs{Home: home}
	os.MkdirAll(filepath.Dir(d.UserFile()), 0o700)
	if err := os.WriteFile(d.UserFile(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	pins := filepath.Join(home, "elsewhere", "pins.db")
	open := func() *switchboard.Engine {
		eng, err := switchboard.New(t.Context(), config.Load(d), &switchboard.Options{SpillDir: filepath.Join(home, "spill"), PinsPath: pins})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { eng.Close() })
		return eng
	}

	setTools(hostile.Note())
	eng := open()
	if r := eng.Handle(t.Context(), json.RawMessage(`{"server": "s"}`)); r.IsError {
		t.Fatal(r.Text)
	}
	eng.Close()
	if _, err := os.Stat(pins); err != nil {
		t.Fatalf("no pins at Options.PinsPath: %v", err)
	}

	setTools(hostile.NotePulled())
	eng = open()
	r := eng.Handle(t.Context(), json.RawMessage(`{"server": "s"}`))
	if !strings.Contains(r.Text, proxy.ChangedMark+" save_note — Saves a note.") || strings.Contains(r.Text, hostile.InjectedWord) {
		t.Errorf("listing after the rug pull:\n%s", r.Text)
	}
	r = eng.Handle(t.Context(), json.RawMessage(`{"tool": "save_note", "server": "s", "args": {"note": "x"}}`))
	if !r.IsError || !strings.Contains(r.Text, "quarantined") {
		t.Errorf("call after the rug pull: %s", r.Text)
	}
	if _, err := os.Stat(filepath.Join(home, "calls")); err == nil {
		t.Error("the call reached the server")
	}
}
