package hosts

import (
	"slices"
	"testing"
)

// platformDirs is a machine of each platform, as config.FromEnv finds it.
func platformDirs(goos string) Dirs {
	home := map[string]string{"linux": "/home/me", "darwin": "/Users/me", "windows": `C:\Users\me`}[goos]
	return Dirs{GOOS: goos, Home: home}.WithDefaults()
}

// TestWindsurfFiles: the importer also reads the JetBrains plugin's file
// and Devin Desktop's, which is under %APPDATA% on Windows.
func TestWindsurfFiles(t *testing.T) {
	for goos, want := range map[string][]string{
		"linux":   {"/home/me/.codeium/mcp_config.json", "/home/me/.config/devin/mcp_config.json", "/home/me/.codeium/windsurf/mcp_config.json"},
		"windows": {`C:\Users\me\.codeium\mcp_config.json`, `C:\Users\me\AppData\Roaming\devin\mcp_config.json`, `C:\Users\me\.codeium\windsurf\mcp_config.json`},
	} {
		if got := platformDirs(goos).windsurfConfigs(); !slices.Equal(got, want) {
			t.Errorf("%s: windsurfConfigs = %q, want %q", goos, got, want)
		}
	}
}

// TestClaudeDesktopMSIX: a Microsoft Store install of Claude Desktop reads
// its package's copy of %APPDATA%, falling back to the real one.
func TestClaudeDesktopMSIX(t *testing.T) {
	d := platformDirs("windows")
	const (
		pkg     = `C:\Users\me\AppData\Local\Packages\Claude_pzs8sxrjxfjjc`
		copied  = pkg + `\LocalCache\Roaming\Claude\claude_desktop_config.json`
		roaming = `C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json`
	)
	tests := []struct {
		name     string
		packages []string
		exist    []string
		want     string
	}{
		{"no package", nil, nil, roaming},
		{"no package, file", nil, []string{roaming}, roaming},
		{"package, no file yet", []string{pkg}, nil, copied},
		{"package, its copy", []string{pkg}, []string{copied, roaming}, copied},
		{"package, only the real file", []string{pkg}, []string{roaming}, roaming},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := claudeDesktopFile(d, tt.packages, func(p string) bool { return slices.Contains(tt.exist, p) })
			if got != tt.want {
				t.Errorf("claudeDesktopFile = %s, want %s", got, tt.want)
			}
		})
	}
	mac := platformDirs("darwin")
	if got := claudeDesktopFile(mac, []string{pkg}, func(string) bool { return true }); got != "/Users/me/Library/Application Support/Claude/claude_desktop_config.json" {
		t.Errorf("packages count on macOS: %s", got)
	}
}
