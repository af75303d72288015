package main

import (
	"os"
	"slices"
	"testing"
)

func TestShellJoin(t *testing.T) {
	args := []string{"claude", "mcp", "add", "--", `C:\Program Files\switchboard\switchboard.exe`, "serve", `{"name":"it's"}`, "", "-x"}
	for goos, want := range map[string]string{
		"linux":   `claude mcp add -- 'C:\Program Files\switchboard\switchboard.exe' serve '{"name":"it'\''s"}' '' -x`,
		"darwin":  `claude mcp add -- 'C:\Program Files\switchboard\switchboard.exe' serve '{"name":"it'\''s"}' '' -x`,
		"windows": `claude mcp add '--' 'C:\Program Files\switchboard\switchboard.exe' serve '{"name":"it''s"}' '' '-x'`,
	} {
		if got := shellJoin(goos, args); got != want {
			t.Errorf("shellJoin(%s) =\n%s\nwant\n%s", goos, got, want)
		}
	}
	if got := shellJoin("windows", []string{`C:\Users\me\go\bin\switchboard.exe`, "serve"}); got != `C:\Users\me\go\bin\switchboard.exe serve` {
		t.Errorf("a plain Windows path is quoted: %s", got)
	}
}

func TestWithExe(t *testing.T) {
	exist := []string{`C:\tools\switchboard.exe`, `C:\both\switchboard`, `C:\both\switchboard.exe`, "/opt/sb/switchboard.exe"}
	exists := func(p string) bool { return slices.Contains(exist, p) }
	for _, tt := range []struct{ goos, path, want string }{
		{"windows", `C:\tools\switchboard`, `C:\tools\switchboard.exe`},
		{"windows", `C:\tools\switchboard.exe`, `C:\tools\switchboard.exe`},
		{"windows", `C:\both\switchboard`, `C:\both\switchboard`}, // it exists as written
		{"windows", `C:\none\switchboard`, `C:\none\switchboard`},
		{"windows", "switchboard", "switchboard"}, // the host looks a bare name up
		{"linux", "/opt/sb/switchboard", "/opt/sb/switchboard"},
		{"darwin", "/opt/sb/switchboard", "/opt/sb/switchboard"},
	} {
		if got := withExe(tt.goos, tt.path, exists); got != tt.want {
			t.Errorf("withExe(%s, %s) = %s, want %s", tt.goos, tt.path, got, tt.want)
		}
	}
}

func TestColorOK(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		vt   bool
		want bool
	}{
		{nil, true, true},
		{map[string]string{"NO_COLOR": "1"}, true, false},
		{map[string]string{"NO_COLOR": ""}, true, true}, // no-color.org: set and not empty
		{map[string]string{"TERM": "dumb"}, true, false},
		{nil, false, false}, // a Windows console without escape sequences
	} {
		if got := colorOK(func(k string) string { return tt.env[k] }, tt.vt); got != tt.want {
			t.Errorf("colorOK(%v, vt %v) = %v, want %v", tt.env, tt.vt, got, tt.want)
		}
	}
}

// TestIsTerminal: a character device that is no terminal (/dev/null, as
// NUL on Windows) gets no progress line and no colour.
func TestIsTerminal(t *testing.T) {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Errorf("%s is taken for a terminal", os.DevNull)
	}
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Errorf("a regular file is taken for a terminal")
	}
}
