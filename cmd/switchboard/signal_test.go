package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
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

// binary is the switchboard command that testscript.Main put on PATH: this
// test binary, run as switchboard, in a process of its own.
func binary(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("switchboard")
	if err != nil {
		t.Fatalf("switchboard is not on PATH (TestMain puts it there): %v", err)
	}
	return path
}

// hermeticEnv is an environment with HOME at home and none of the real
// user's configuration.
func hermeticEnv(home string) []string {
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + os.TempDir()}
	for _, k := range []string{mcptest.OwnerEnv, "GOCOVERDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// waitExit waits for cmd to exit and returns its exit code. Should it not
// exit at all, the test fails after a minute, far longer than any clean
// stop takes: the bound turns a hang into a failure and measures nothing.
func waitExit(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("waiting for switchboard: %v", err)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("switchboard ignored the signal: still running a minute later, killed; stderr:\n%s", stderr.String())
		return 0
	}
}

// TestSignalEndsAStuckCommand starts the real binary on a command stuck in
// work that does not heed its context, reading arguments from a pipe that
// never ends, and checks that SIGINT, SIGTERM and SIGHUP (the terminal
// closed) end it all the same, with exit code 130.
func TestSignalEndsAStuckCommand(t *testing.T) {
	bin := binary(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			var stderr bytes.Buffer
			cmd := exec.Command(bin, "call", "echo", "--server", "x", "--args", "-")
			cmd.Env = hermeticEnv(t.TempDir())
			cmd.Stdin, cmd.Stderr = r, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			r.Close()
			// A pipe holds 64 KiB: once a megabyte is written, the command
			// has read most of it, so it is running, signal handling and
			// all, and stuck reading for the end that never comes.
			if _, err := w.Write(bytes.Repeat([]byte(" "), 1<<20)); err != nil {
				t.Fatalf("writing to the command: %v; stderr:\n%s", err, stderr.String())
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, cmd, &stderr); code != exitInterrupted {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, exitInterrupted, stderr.String())
			}
			if !strings.Contains(stderr.String(), "switchboard: interrupted") {
				t.Errorf("stderr: got %q, want it to say the command was interrupted", stderr.String())
			}
		})
	}
}

// TestSIGTERMStopsACall sends SIGTERM to the real binary while a call hangs
// in a server, and checks that it exits 130 and leaves no process behind.
func TestSIGTERMStopsACall(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	bin := binary(t)
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
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "call", "record", "--server", "f", "file="+file, "then=hang")
	cmd.Env, cmd.Stderr = hermeticEnv(home), &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if data, _ := os.ReadFile(file); len(data) > 0 {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the call never reached the server; stderr:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond) // polling a file the fixture writes: there is no event to wait on
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, &stderr); code != exitInterrupted {
		t.Errorf("exit code %d, want %d; stderr:\n%s", code, exitInterrupted, stderr.String())
	}
}

// TestInterruptibleAbandonsAStuckCommand checks interruptible alone, with a
// command that never returns: after the grace (kept short here, since the
// wait is the point), it gives up with 130 and says so.
func TestInterruptibleAbandonsAStuckCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	stuck := make(chan struct{})
	defer close(stuck)
	var stderr bytes.Buffer
	stopped := false
	cancel()
	code := interruptible(ctx, func() { stopped = true }, nil, &stderr, func() time.Duration { return 10 * time.Millisecond }, func() int { <-stuck; return 0 })
	if code != exitInterrupted || !stopped || !strings.Contains(stderr.String(), "did not stop within 10ms") {
		t.Errorf("got %d, stop called %v, stderr %q; want %d, stop called, a word on stderr", code, stopped, stderr.String(), exitInterrupted)
	}
	// A command that stops in time gives its own code.
	code = interruptible(ctx, func() {}, nil, &stderr, func() time.Duration { return time.Minute }, func() int { return exitFailure })
	if code != exitFailure {
		t.Errorf("got %d, want the command's own %d", code, exitFailure)
	}
}
