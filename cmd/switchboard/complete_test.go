package main

import (
	"bytes"
	"os"
	"runtime"
	"testing"
)

// TestEveryCommandListsItsFlags: completion asks each command for its
// help to learn its flags, which is safe only because every command parses
// them before it does anything. A command that stopped doing so would lose
// its flags' completion here, and might act on "--help".
func TestEveryCommandListsItsFlags(t *testing.T) {
	home := t.TempDir()
	var out bytes.Buffer
	e := &env{
		stdin: bytes.NewReader(nil), stdout: &out, stderr: &out,
		getenv:    func(k string) string { return map[string]string{"HOME": home}[k] },
		lookupEnv: func(string) (string, bool) { return "", false },
		cwd:       home, goos: runtime.GOOS,
	}
	for _, c := range commands() {
		if c.hidden || c.name == "completion" {
			continue
		}
		fs := commandFlags(t.Context(), e, c)
		if fs == nil {
			t.Errorf("%s --help did not return its flags", c.name)
			continue
		}
		if c.name != "setup" && fs.Lookup("config") == nil {
			t.Errorf("%s: no --config among its flags", c.name)
		}
	}
	if out.Len() > 0 {
		t.Errorf("asking for flags printed:\n%s", out.String())
	}
	if entries, _ := os.ReadDir(home); len(entries) > 0 {
		t.Errorf("asking for flags wrote %d entries into HOME", len(entries))
	}
}

func TestScanLine(t *testing.T) {
	fs := commandFlags(t.Context(), &env{getenv: func(string) string { return "" }}, callCommand())
	st := scanLine(fs, []string{"--json", "x", "--server", "s", "k=v", "--config=c.json"})
	if len(st.pos) != 2 || st.pos[0] != "x" || st.pos[1] != "k=v" || st.values["server"] != "s" || st.values["config"] != "c.json" || st.pending != "" {
		t.Errorf("scanLine = %+v", st)
	}
	if st := scanLine(fs, []string{"x", "--server"}); st.pending != "server" {
		t.Errorf("a flag waiting for its value: got %+v", st)
	}
}
