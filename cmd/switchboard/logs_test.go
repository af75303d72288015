package main

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// serve writes its log, with each stdio server's stderr, to the state
// directory, and logs shows it, filtered by server and age; logs -f prints
// lines as serve writes them.
func TestServeLog(t *testing.T) {
	const canary = "CANARY-LOG-51c2"
	home := serveHome(t, map[string]any{"local": fixtureServer(testserver.Meta), "other": fixtureServer(testserver.Good)}, nil)
	logPath := filepath.Join(home, ".local", "state", "switchboard", "serve.log")
	// A line from long ago, which --since leaves out.
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		t.Fatal(err)
	}
	old := `time=2020-01-01T00:00:00.000Z level=INFO msg=call session=00000000 server=local tool=ancient` + "\n"
	if err := os.WriteFile(logPath, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}

	session := func() {
		t.Helper()
		cmd, cs := serveStdio(t, home, mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil))
		callText(t, cs, "mcp", map[string]any{"tool": "meta", "server": "local", "args": map[string]any{"canary": canary}})
		callText(t, cs, "mcp", map[string]any{"tool": "echo", "server": "other", "args": map[string]any{"text": canary}})
		cs.Close()
		cmd.Wait()
	}
	session()

	logs := func(args ...string) string {
		t.Helper()
		out, err := switchboardCmd(t, home, append([]string{"logs"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("logs %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	all := logs()
	for _, want := range []string{"msg=starting", "tool=ancient", "msg=call", "server=local", "operation=call", "tool=meta", "outcome=ok",
		`msg=stderr`, `line="meta: called"`, "server=other", "tool=echo"} {
		if !strings.Contains(all, want) {
			t.Errorf("logs lacks %q:\n%s", want, all)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(all), "\n") {
		if !strings.Contains(line, " session=") {
			t.Errorf("a line without its session: %s", line)
		}
	}
	if strings.Contains(all, canary) {
		t.Errorf("the log holds a call's argument:\n%s", all)
	}
	local := logs("--server", "local")
	if !strings.Contains(local, `line="meta: called"`) || !strings.Contains(local, "tool=meta") || strings.Contains(local, "server=other") {
		t.Errorf("logs --server local:\n%s", local)
	}
	if recent := logs("--since", "1h"); strings.Contains(recent, "tool=ancient") || !strings.Contains(recent, "tool=meta") {
		t.Errorf("logs --since 1h:\n%s", recent)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(logPath)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("log file: %v, %v; want mode 0600", fi.Mode(), err)
		}
	}

	// logs -f: the lines of a later session arrive while it runs.
	follow := switchboardCmd(t, home, "logs", "-f", "--server", "local")
	stdout, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		follow.Process.Signal(os.Interrupt)
		follow.Wait()
	}()
	lines := bufio.NewScanner(stdout)
	waitLine := func(want string, n int) {
		t.Helper()
		for seen := 0; lines.Scan(); {
			if strings.Contains(lines.Text(), want) {
				if seen++; seen == n {
					return
				}
			}
		}
		t.Fatalf("logs -f ended before %d lines with %q: %v", n, want, lines.Err())
	}
	waitLine(`line="meta: called"`, 1) // what is there already
	session()
	waitLine(`line="meta: called"`, 1) // the new session's
}
