package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestFilesystemAndMemory runs the engine against the real filesystem and
// memory servers side by side: cross-server search, calls that change
// state, and an error a server reports.
func TestFilesystemAndMemory(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	p := mcptest.Peers(t)
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("switchboard canary notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, map[string]def{
		"fs":     peer(p.Filesystem(root)),
		"memory": peer(p.Memory(filepath.Join(t.TempDir(), "memory.jsonl"))),
	}, nil)

	r := must(t, e, `{"search":"read the contents of a text file"}`)
	if len(r.Details.Tools) == 0 || r.Details.Tools[0].Server != "fs" || !strings.HasPrefix(r.Details.Tools[0].Name, "read_") {
		t.Errorf("search for reading a file: first hit %+v, want a read tool of fs\n%s", r.Details.Tools, r.Text)
	}
	if got := r.Details.Search.Servers; len(got) != 2 {
		t.Errorf("searched servers %v, want both", got)
	}

	req, _ := json.Marshal(map[string]any{"tool": "read_text_file", "args": map[string]any{"path": filepath.Join(root, "notes.txt")}})
	r = must(t, e, string(req))
	wantText(t, r, "switchboard canary notes")

	req, _ = json.Marshal(map[string]any{"tool": "fs_write_file", "args": map[string]any{"path": filepath.Join(root, "new.txt"), "content": "written through the gateway"}})
	must(t, e, string(req))
	if data, err := os.ReadFile(filepath.Join(root, "new.txt")); err != nil || string(data) != "written through the gateway" {
		t.Errorf("write_file wrote %q, %v", data, err)
	}

	// The server refuses a path outside its roots: an error result with its text.
	req, _ = json.Marshal(map[string]any{"tool": "read_text_file", "server": "fs", "args": map[string]any{"path": "/etc/hostname"}})
	r = handle(t, e, string(req))
	if !r.IsError {
		t.Errorf("reading outside the roots succeeded:\n%s", r.Text)
	}
	wantText(t, r, `tool "read_text_file" on "fs" returned an error`)

	must(t, e, `{"tool":"create_entities","args":{"entities":[{"name":"Ada","entityType":"person","observations":["wrote the first program"]}]}}`)
	r = must(t, e, `{"tool":"memory_read_graph"}`)
	wantText(t, r, "Ada", "wrote the first program")
	r = must(t, e, `{"tool":"search_nodes","server":"memory","args":{"query":"Ada"}}`)
	wantText(t, r, "person")

	r = must(t, e, `{}`)
	wantText(t, r, "2 servers (2 connected)", "fs  connected  14 tools", "memory  connected  9 tools")
}
