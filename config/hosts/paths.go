package hosts

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Where each host keeps its user-scope MCP settings on each platform
// (HOSTS.md §1): the importers read these files, and setup writes them. d
// has its defaults; paths are built with d.join, so that they are those of
// d.GOOS whatever platform computes them.

// claudeDesktopConfig is Claude Desktop's file: under Application Support on
// macOS; on Windows under %APPDATA%, or in the Microsoft Store (MSIX)
// package's own copy of it (see claudeDesktopFile); unofficial Linux builds
// use ~/.config/Claude (reported).
func (d Dirs) claudeDesktopConfig() string {
	return claudeDesktopFile(d, d.claudePackages(), fileExists)
}

// claudeDesktopFile picks Claude Desktop's file, given the MSIX package
// directories of Claude (%LOCALAPPDATA%\Packages\Claude_*, on Windows) and
// which files exist. An MSIX install reads %APPDATA% through a private copy
// in its package (LocalCache\Roaming), falling back to the real %APPDATA%
// file where there is no copy (reported). So: the first copy that exists,
// else the %APPDATA% file if it exists, else the first package's copy
// (where the app would look first), else the %APPDATA% file.
func claudeDesktopFile(d Dirs, packages []string, exists func(string) bool) string {
	const name = "claude_desktop_config.json"
	switch d.GOOS {
	case "darwin":
		return d.join(d.Home, "Library", "Application Support", "Claude", name)
	case "windows":
	default:
		return d.join(d.ConfigHome, "Claude", name)
	}
	roaming := d.join(d.AppData, "Claude", name)
	var copies []string
	for _, p := range packages {
		copies = append(copies, d.join(p, "LocalCache", "Roaming", "Claude", name))
	}
	if i := slices.IndexFunc(copies, exists); i >= 0 {
		return copies[i]
	}
	if len(copies) == 0 || exists(roaming) {
		return roaming
	}
	return copies[0]
}

// claudePackages lists Claude's MSIX package directories, sorted; none
// outside Windows.
func (d Dirs) claudePackages() []string {
	if d.GOOS != "windows" || d.LocalAppData == "" {
		return nil
	}
	dirs, _ := filepath.Glob(d.join(d.LocalAppData, "Packages", "Claude_*"))
	return dirs
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// claudeCodeConfig is ~/.claude.json (%USERPROFILE%\.claude.json on
// Windows), which also holds Claude Code's per-project state, OAuth
// accounts and caches.
func (d Dirs) claudeCodeConfig() string { return d.join(d.Home, ".claude.json") }

func (d Dirs) cursorConfig() string { return d.join(d.Home, ".cursor", "mcp.json") }

// vscodeUserDir is the folder of VS Code's default profile, which holds
// mcp.json and settings.json: in the platform's application-data folder
// (%APPDATA% on Windows, Application Support on macOS, $XDG_CONFIG_HOME
// on Linux).
func (d Dirs) vscodeUserDir() string {
	switch d.GOOS {
	case "darwin":
		return d.join(d.Home, "Library", "Application Support", "Code", "User")
	case "windows":
		return d.join(d.AppData, "Code", "User")
	}
	return d.join(d.ConfigHome, "Code", "User")
}

// windsurfConfig is the Windsurf editor's file, in the home directory on
// every platform.
func (d Dirs) windsurfConfig() string {
	return d.join(d.Home, ".codeium", "windsurf", "mcp_config.json")
}

// windsurfConfigs lists the files the Windsurf importer reads, lowest
// precedence first: the JetBrains plugin's, the one Devin Desktop is
// reported to use ($XDG_CONFIG_HOME/devin, %APPDATA%\devin on Windows),
// and the editor's.
func (d Dirs) windsurfConfigs() []string {
	devin := d.join(d.ConfigHome, "devin", "mcp_config.json")
	if d.GOOS == "windows" {
		devin = d.join(d.AppData, "devin", "mcp_config.json")
	}
	return []string{d.join(d.Home, ".codeium", "mcp_config.json"), devin, d.windsurfConfig()}
}

// codexConfig is $CODEX_HOME/config.toml, by default ~/.codex/config.toml on
// every platform.
func (d Dirs) codexConfig() string { return d.join(d.CodexHome, "config.toml") }

// opencodeDir holds opencode.json and opencode.jsonc: $XDG_CONFIG_HOME/opencode,
// ~/.config/opencode on macOS and Windows too (opencode follows the XDG
// layout everywhere).
func (d Dirs) opencodeDir() string { return d.join(d.ConfigHome, "opencode") }

// geminiSettings is ~/.gemini/settings.json on every platform.
func (d Dirs) geminiSettings() string { return d.join(d.Home, ".gemini", "settings.json") }

// Join joins path elements with the separator of goos, as filepath.Join
// does on that platform: on Windows a backslash, with a leading \\ of a UNC
// path kept. On the platform itself it is filepath.Join.
func Join(goos string, elem ...string) string {
	if goos != "windows" || filepath.Separator == '\\' {
		return filepath.Join(elem...)
	}
	var parts []string
	for _, e := range elem {
		if e != "" {
			parts = append(parts, strings.ReplaceAll(e, `\`, "/"))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	s := strings.Join(parts, "/")
	unc := strings.HasPrefix(s, "//")
	s = path.Clean(s)
	if unc {
		s = "/" + s
	}
	return strings.ReplaceAll(s, "/", `\`)
}
