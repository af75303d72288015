package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestInterruptStopsEverything cancels a command mid-call, as SIGINT or
// SIGTERM do through signal.NotifyContext in main, and checks that it exits
// 130 promptly and leaves no child process behind.
func TestInterruptStopsEverything(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := t.TempDir()
	path, args, fixEnv := testserver.Command(testserver.Good)
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"f": map[string]any{"command": path, "args": args, "env": fixEnv}}})
	if err := os.MkdirAll(filepath.Join(home, ".config", "switchboard"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "switchboard", "config.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "calls")
	var stdout, stderr bytes.Buffer
	e := &env{
		stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, cwd: home, goos: runtime.GOOS,
		getenv: func(k string) string {
			switch k {
			case "HOME":
				return home
			case "TMPDIR":
				return os.Getenv("TMPDIR")
			}
			return ""
		},
		lookupEnv: func(string) (string, bool) { return "", false },
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- run(ctx, e, []string{"call", "record", "--server", "f", "file=" + file, "then=hang"}) }()

	// Interrupt once the call has reached the server.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if data, _ := os.ReadFile(file); len(data) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the call never reached the server; stderr:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond) // polling a file the child writes: there is no event to wait on
	}
	start := time.Now()
	cancel()
	select {
	case code := <-done:
		if code != exitInterrupted {
			t.Errorf("exit code %d, want %d; stderr:\n%s", code, exitInterrupted, stderr.String())
		}
		t.Logf("stopped %v after the interrupt", time.Since(start))
	case <-time.After(15 * time.Second):
		t.Fatal("the command did not stop within 15s of the interrupt")
	}
}
