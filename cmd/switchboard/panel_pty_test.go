//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// These tests run the real binary with a pseudo-terminal (creack/pty) as
// its terminal, as a person would, against the npm everything server.

// terminal collects what a process writes to a pseudo-terminal and lets a
// test wait for text to appear in it.
type terminal struct {
	ptmx *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	more *sync.Cond
	done bool
}

func newTerminal(ptmx *os.File) *terminal {
	term := &terminal{ptmx: ptmx}
	term.more = sync.NewCond(&term.mu)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			if err != nil {
				term.done = true
			}
			term.more.Broadcast()
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return term
}

// waitFor waits until the output after from holds s, and returns where s
// ends; it fails the test after a minute (a bound that only turns a hang
// into a failure: nothing here takes that long).
func (term *terminal) waitFor(t *testing.T, from int, s string) int {
	t.Helper()
	timer := time.AfterFunc(time.Minute, func() {
		term.mu.Lock()
		term.done = true
		term.more.Broadcast()
		term.mu.Unlock()
	})
	defer timer.Stop()
	term.mu.Lock()
	defer term.mu.Unlock()
	for {
		if i := bytes.Index(term.out.Bytes()[from:], []byte(s)); i >= 0 {
			return from + i + len(s)
		}
		if term.done {
			t.Fatalf("the terminal never showed %q; it showed:\n%q", s, term.out.String()[from:])
		}
		term.more.Wait()
	}
}

func (term *terminal) send(t *testing.T, s string) {
	t.Helper()
	if _, err := term.ptmx.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
}

// exitCode waits for cmd and returns its exit code, failing the test
// should it not exit within a minute.
func exitCode(t *testing.T, cmd *exec.Cmd) int {
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
		t.Fatal("switchboard did not exit within a minute")
		return 0
	}
}

// TestPanelPTY opens the panel in a pseudo-terminal, searches for a tool,
// describes it, calls get-sum through the form, and quits.
func TestPanelPTY(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := everythingHome(t)
	cmd := exec.Command(binary(t), "panel")
	cmd.Env = append(hermeticEnv(home), "TERM=xterm-256color")
	cmd.Dir = home
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 30, Cols: 110})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	term := newTerminal(ptmx)
	at := term.waitFor(t, 0, "SOURCE")
	at = term.waitFor(t, at, "everything")
	term.send(t, "2")
	at = term.waitFor(t, at, "search:")
	term.send(t, "sum two numbers")
	at = term.waitFor(t, at, "get-sum")
	term.send(t, "\r") // to the list
	term.send(t, "\r") // describe the first match
	at = term.waitFor(t, at, "input schema")
	term.send(t, "\r") // the form
	at = term.waitFor(t, at, "a* (a number)")
	term.send(t, "2\t3\r") // a=2, b=3, call
	at = term.waitFor(t, at, "The sum of 2 and 3 is 5.")
	term.send(t, "3") // the call is among the recent calls
	at = term.waitFor(t, at, "STARTED")
	term.waitFor(t, at, "get-sum")
	term.send(t, "q")
	if code := exitCode(t, cmd); code != 0 {
		t.Errorf("exit code %d, want 0; the terminal showed:\n%q", code, term.out.String())
	}
}

// TestPanelNeedsTerminal: without a terminal the panel says so and what
// to use instead; under TERM=dumb too.
func TestPanelNeedsTerminal(t *testing.T) {
	home := homeWith(t, map[string]any{})
	var stderr bytes.Buffer
	cmd := exec.Command(binary(t), "panel")
	cmd.Env, cmd.Dir, cmd.Stderr = hermeticEnv(home), home, &stderr
	if code := exitCode(t, startCmd(t, cmd)); code != 1 || !strings.Contains(stderr.String(), "panel needs a terminal") {
		t.Errorf("piped: exit %d, stderr %q", code, stderr.String())
	}
	cmd = exec.Command(binary(t), "panel")
	cmd.Env, cmd.Dir = append(hermeticEnv(home), "TERM=dumb"), home
	ptmx, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	term := newTerminal(ptmx)
	term.waitFor(t, 0, "TERM=dumb says this one does not")
	if code := exitCode(t, cmd); code != 1 {
		t.Errorf("TERM=dumb: exit %d, want 1", code)
	}
}

func startCmd(t *testing.T, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestCallProgress: a long call's progress shows as a line on a terminal,
// and not at all when stderr is a pipe.
func TestCallProgress(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := everythingHome(t)
	args := []string{"call", "trigger-long-running-operation", "--server", "everything", "duration=1.5", "steps=3"}

	t.Run("terminal", func(t *testing.T) {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer ptmx.Close()
		var stdout bytes.Buffer
		cmd := exec.Command(binary(t), args...)
		cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = append(hermeticEnv(home), "TERM=xterm"), home, &stdout, tty
		startCmd(t, cmd)
		tty.Close()
		term := newTerminal(ptmx)
		term.waitFor(t, 0, "trigger-long-running-operation: 1/3 33%")
		if code := exitCode(t, cmd); code != 0 {
			t.Fatalf("exit %d; stderr %q", code, term.out.String())
		}
		term.waitFor(t, 0, "\r\x1b[K") // the line is erased
		if !strings.Contains(stdout.String(), "Long running operation completed") {
			t.Errorf("stdout %q", stdout.String())
		}
	})
	t.Run("pipe", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(binary(t), args...)
		cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = append(hermeticEnv(home), "TERM=xterm"), home, &stdout, &stderr
		if code := exitCode(t, startCmd(t, cmd)); code != 0 {
			t.Fatalf("exit %d; stderr %q", code, stderr.String())
		}
		if stderr.Len() != 0 {
			t.Errorf("stderr on a pipe: %q, want nothing", stderr.String())
		}
		if !strings.Contains(stdout.String(), "Long running operation completed") {
			t.Errorf("stdout %q", stdout.String())
		}
	})
}

// TestCallInterruptCancelsUpstream: SIGINT during a call sends the server
// notifications/cancelled for it, and the command exits 130.
func TestCallInterruptCancelsUpstream(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{}) // ends a call the server did not cancel, so that the server can close
	s := mcp.NewServer(&mcp.Implementation{Name: "waiter", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "wait", Description: "Waits until cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			select {
			case started <- struct{}{}:
			default:
			}
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-release:
				return nil, nil, errors.New("released")
			}
		})
	// What the server was told, seen on the wire: go-sdk's server may end
	// the session (the CLI's closing DELETE) before it handles a
	// notification it accepted.
	handler, cancelled := mcptest.Told(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil), "notifications/cancelled")
	ts := httptest.NewServer(handler)
	defer ts.Close()
	defer close(release)
	home := homeWith(t, map[string]any{"w": map[string]any{"url": ts.URL}})
	var stderr bytes.Buffer
	cmd := exec.Command(binary(t), "call", "wait", "--server", "w")
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = hermeticEnv(home), home, io.Discard, &stderr
	startCmd(t, cmd)
	select {
	case <-started:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("the call never reached the server; stderr %q", stderr.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-cancelled:
	case <-time.After(time.Minute):
		t.Error("the server was never sent notifications/cancelled")
	}
	if code := exitCode(t, cmd); code != exitInterrupted {
		t.Errorf("exit %d, want %d; stderr %q", code, exitInterrupted, stderr.String())
	}
}

// TestPanelFirstRun: with no Switchboard configuration but Claude Code's
// file holding servers, the panel's first screen names the host, how many
// servers it holds, and the exact import command, as status does.
func TestPanelFirstRun(t *testing.T) {
	home := t.TempDir()
	claude := `{"mcpServers": {"alpha": {"command": "alpha-mcp"}, "beta": {"type": "http", "url": "https://beta.example/mcp"}}}`
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(claude), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary(t), "panel")
	cmd.Env = append(hermeticEnv(home), "TERM=xterm-256color", "NO_COLOR=1")
	cmd.Dir = home
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 30, Cols: 110})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	term := newTerminal(ptmx)
	at := term.waitFor(t, 0, "No servers are configured.")
	at = term.waitFor(t, at, "claude-code: 2 servers (alpha, beta)")
	term.waitFor(t, at, "switchboard import --from claude-code --write")
	term.send(t, "q")
	if code := exitCode(t, cmd); code != 0 {
		t.Errorf("exit code %d, want 0; the terminal showed:\n%q", code, term.out.String())
	}
}
