package config

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
)

// Import is what was read from one host's own MCP settings.
type Import struct {
	Host     string
	Files    []string  // the host files that exist and were read
	Servers  []*Server // valid definitions, in a stable order
	Problems []Problem // warnings: an import never fails the configuration
}

// HostNames lists the hosts Switchboard imports from, sorted.
func HostNames() []string {
	names := []string{"claude-code", "claude-desktop", "codex", "cursor", "gemini", "opencode", "vscode", "windsurf"}
	sort.Strings(names)
	return names
}

func knownHost(name string) bool {
	for _, h := range HostNames() {
		if h == name {
			return true
		}
	}
	return false
}

// ImportHost reads a host's MCP server definitions, read-only. An unknown
// host yields an Import with one warning.
func ImportHost(d Dirs, host string) *Import {
	d = d.withDefaults()
	f, ok := hostImporters[host]
	if !ok {
		return &Import{Host: host, Problems: []Problem{{Severity: SeverityWarning, File: host,
			Message: fmt.Sprintf("unknown host %q (known hosts: %v)", host, HostNames())}}}
	}
	return f(d)
}

// importServers validates definitions a host importer has normalized to our
// own schema (the value of an mcpServers object) with the tolerant rules of
// shared files. Definitions with errors are skipped with a warning that names
// the host file; the rest are returned sorted by name.
func importServers(src Source, defs map[string]any) ([]*Server, []Problem) {
	data, err := json.Marshal(map[string]any{"mcpServers": defs})
	if err != nil {
		return nil, []Problem{{Severity: SeverityWarning, File: src.Path, Message: "cannot import: " + err.Error()}}
	}
	doc, probs, _ := decodeFile(src, data)
	bad := map[string]bool{}
	for i := range probs {
		probs[i].Line, probs[i].Col = 0, 0 // positions in the normalized text mean nothing to a person
		if probs[i].Severity == SeverityError {
			bad[probs[i].Server] = true
			probs[i].Severity = SeverityWarning
			probs[i].Message += " (server skipped)"
		}
	}
	var out []*Server
	if doc != nil {
		for _, s := range doc.servers {
			if !bad[s.Name] {
				out = append(out, s)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, probs
}

// Where each host keeps its user-scope MCP settings (HOSTS.md §1): the
// importers read these files, and setup writes them. d has its defaults.

// claudeDesktopConfig is Claude Desktop's file. It ships for macOS and
// Windows; unofficial Linux builds use ~/.config/Claude (reported).
func (d Dirs) claudeDesktopConfig() string {
	dir := filepath.Join(d.ConfigHome, "Claude")
	if d.GOOS == "darwin" {
		dir = filepath.Join(d.Home, "Library", "Application Support", "Claude")
	}
	return filepath.Join(dir, "claude_desktop_config.json")
}

// claudeCodeConfig is ~/.claude.json, which also holds Claude Code's
// per-project state, OAuth accounts and caches.
func (d Dirs) claudeCodeConfig() string { return filepath.Join(d.Home, ".claude.json") }

func (d Dirs) cursorConfig() string { return filepath.Join(d.Home, ".cursor", "mcp.json") }

// vscodeUserDir is the folder of VS Code's default profile, which holds
// mcp.json and settings.json.
func (d Dirs) vscodeUserDir() string {
	if d.GOOS == "darwin" {
		return filepath.Join(d.Home, "Library", "Application Support", "Code", "User")
	}
	return filepath.Join(d.ConfigHome, "Code", "User")
}

// windsurfConfig is the Windsurf editor's file.
func (d Dirs) windsurfConfig() string {
	return filepath.Join(d.Home, ".codeium", "windsurf", "mcp_config.json")
}

func (d Dirs) codexConfig() string { return filepath.Join(d.CodexHome, "config.toml") }

// opencodeDir holds opencode.json and opencode.jsonc: $XDG_CONFIG_HOME/opencode,
// ~/.config/opencode on macOS too.
func (d Dirs) opencodeDir() string { return filepath.Join(d.ConfigHome, "opencode") }

func (d Dirs) geminiSettings() string { return filepath.Join(d.Home, ".gemini", "settings.json") }
