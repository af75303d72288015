package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A terminal that never answers a query (GNU screen, the Linux console,
// script, some IDE terminals) must not hold up a command: no package
// initialisation in the binary may ask the terminal anything (issue 30,
// "No terminal I/O at start"). bubbletea v1 and lipgloss v1 asked it for
// its background colour in their package initialisation, in every command,
// and waited up to 5 s for an answer that never came.
//
// Timing is the point of these tests, which is why they hold a bound: a
// second, generous for a command that does no work (they take a few
// milliseconds) and five times shorter than the wait they catch.
const silentBound = time.Second

// ptyPair opens a new pseudo-terminal: its master side and its terminal
// side. It skips the test where there are none.
func ptyPair(t *testing.T) (ptmx, pts *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 100}); err != nil {
		t.Fatal(err)
	}
	return ptmx, pts
}

// silentTerminal is the master side of a pseudo-terminal that reads what
// the command writes and never writes anything back: no answer to any
// query, no key.
type silentTerminal struct {
	mu   sync.Mutex
	out  bytes.Buffer
	more chan struct{} // closed and replaced at each read
	done chan struct{} // closed when reading ends
}

func newSilentTerminal(ptmx *os.File) *silentTerminal {
	st := &silentTerminal{more: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(st.done)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			st.mu.Lock()
			st.out.Write(buf[:n])
			close(st.more)
			st.more = make(chan struct{})
			st.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return st
}

// shows waits until the terminal shows s or ctx ends.
func (st *silentTerminal) shows(ctx context.Context, s string) bool {
	for {
		st.mu.Lock()
		ok, more := bytes.Contains(st.out.Bytes(), []byte(s)), st.more
		st.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-more:
		case <-st.done:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func (st *silentTerminal) String() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.out.String()
}

// startOnSilentTerminal starts switchboard args with a silent terminal as
// its controlling terminal and its standard input, output and error, as
// script -qc "switchboard ARGS" /dev/null runs it, in a home with an
// empty configuration. The command is killed when ctx ends.
func startOnSilentTerminal(t *testing.T, ctx context.Context, args ...string) (*exec.Cmd, *silentTerminal) {
	t.Helper()
	home := homeWith(t, map[string]any{})
	ptmx, pts := ptyPair(t)
	cmd := exec.CommandContext(ctx, binary(t), args...)
	// A binary built with -race sleeps a second before it exits, to let
	// racing threads be caught (GORACE's atexit_sleep_ms): not here.
	race := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	cmd.Env = append(hermeticEnv(home), "TERM=xterm-256color", "COLORTERM=", "GORACE="+race)
	cmd.Dir = home
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	term := newSilentTerminal(ptmx)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close() // the command holds its own copy
	return cmd, term
}

// TestSilentTerminal runs commands on a terminal that never answers, and
// fails if any takes more than a second to finish.
func TestSilentTerminal(t *testing.T) {
	for _, args := range [][]string{
		{"version"},
		{"status", "--json"},
		{"help"},
		{"search", "anything"},
	} {
		name := args[0]
		if len(args) > 1 {
			name += " " + args[1]
		}
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), silentBound)
			defer cancel()
			start := time.Now()
			cmd, term := startOnSilentTerminal(t, ctx, args...)
			err := cmd.Wait()
			took := time.Since(start)
			if ctx.Err() != nil {
				t.Fatalf("switchboard %s on a terminal that does not answer did not finish within %v (killed after %v); it wrote:\n%q", name, silentBound, took, term.String())
			}
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("waiting for switchboard %s: %v", name, err)
			}
			if code := cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("switchboard %s: exit code %d, want 0; it wrote:\n%q", name, code, term.String())
			}
		})
	}
}

// TestSilentTerminalPanel: the panel draws its first screen within a
// second on a terminal that never answers, and stops on an interrupt.
func TestSilentTerminalPanel(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), silentBound)
	defer cancel()
	cmd, term := startOnSilentTerminal(t, context.Background(), "panel")
	defer cmd.Process.Kill()
	drawn := term.shows(ctx, "No servers")
	if !drawn {
		t.Errorf("the panel did not draw within %v on a terminal that does not answer; it wrote:\n%q", silentBound, term.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd); code != exitInterrupted {
		t.Errorf("exit code %d after an interrupt, want %d; it wrote:\n%q", code, exitInterrupted, term.String())
	}
}
