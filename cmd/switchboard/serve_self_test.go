package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeSkipsItsOwnAddress runs the real binary as serve --http with a
// host import whose entry is the very address it serves: the entry is
// skipped with a warning, so the gateway never lists itself. SIGTERM then
// stops it cleanly.
func TestServeSkipsItsOwnAddress(t *testing.T) {
	var (
		addr   string
		cmd    *exec.Cmd
		stderr *bytes.Buffer
		copied chan struct{}
	)
	for attempt := 1; cmd == nil; attempt++ { // again if the port was taken meanwhile (see freeAddr)
		addr = freeAddr(t)
		home := t.TempDir()
		for path, content := range map[string]string{
			filepath.Join(home, ".cursor", "mcp.json"):                   fmt.Sprintf(`{"mcpServers": {"gateway": {"url": "http://localhost:%s/mcp"}, "fs": {"command": "fs-mcp"}}}`, addr[strings.LastIndexByte(addr, ':')+1:]),
			filepath.Join(home, ".config", "switchboard", "config.json"): `{"imports": ["cursor"]}`,
		} {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		c := exec.Command(binary(t), "serve", "--http", addr)
		c.Env = hermeticEnv(home)
		pipe, err := c.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		serving := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(pipe)
			for sc.Scan() {
				buf.WriteString(sc.Text() + "\n")
				if strings.HasPrefix(sc.Text(), "switchboard: serving ") {
					close(serving)
				}
			}
		}()
		select {
		case <-serving:
			cmd, stderr, copied = c, &buf, done
		case <-done:
			_ = c.Wait()
			if !portTaken(buf.String()) || attempt == 5 {
				t.Fatalf("serve ended before serving; stderr:\n%s", buf.String())
			}
		case <-time.After(time.Minute):
			_ = c.Process.Kill()
			<-done
			_ = c.Wait()
			t.Fatalf("serve did not start serving within a minute; stderr:\n%s", buf.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// stderr closes as the process exits; a minute is far longer than a
	// clean stop takes: the bound turns a hang into a failure.
	select {
	case <-copied:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-copied
		_ = cmd.Wait()
		t.Fatalf("serve ignored SIGTERM: still running a minute later, killed; stderr:\n%s", stderr.String())
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitOK {
		t.Errorf("exit code %d after SIGTERM, want %d; stderr:\n%s", code, exitOK, stderr.String())
	}
	want := fmt.Sprintf("mcpServers.gateway: skipped: http://localhost:%s/mcp is the address this switchboard serves, and a gateway must not list itself", addr[strings.LastIndexByte(addr, ':')+1:])
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr: got\n%s\nwant a warning %q", stderr.String(), want)
	}
}
