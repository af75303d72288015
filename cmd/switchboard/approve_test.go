//go:build !windows

package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// approveHome is a home whose configuration asks before every call of the
// fixture's record tool.
func approveHome(t *testing.T) string {
	home := t.TempDir()
	path, args, fixEnv := testserver.Command(testserver.Good)
	writeConfig(t, home, map[string]any{"mcpServers": map[string]any{"f": map[string]any{
		"command": path, "args": args, "env": fixEnv, "approve": []string{"record"}}}})
	return home
}

func lines(t *testing.T, file string) int {
	data, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

// TestCallAsksOnTheTerminal runs the real binary with a pseudo-terminal on
// standard input: a call an approval rule covers asks there, and the
// answer decides whether the server gets the call (the record tool counts
// what reaches it).
func TestCallAsksOnTheTerminal(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	bin := binary(t)
	home := approveHome(t)
	for _, tc := range []struct {
		answer string
		sent   bool
	}{{"o\n", true}, {"s\n", true}, {"d\n", false}, {"\n", false}, {"whatever\n", false}} {
		t.Run(strings.TrimSpace(tc.answer), func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "calls")
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer ptmx.Close()
			cmd := exec.Command(bin, "call", "record", "--server", "f", "file="+file, "then=")
			cmd.Env = hermeticEnv(home)
			cmd.Stdin = tty
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			stderrR, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
			// Wait for the question, then answer it on the terminal.
			var stderr bytes.Buffer
			r := bufio.NewReader(stderrR)
			for !strings.Contains(stderr.String(), "Allow it?") {
				b, err := r.ReadByte()
				if err != nil {
					cmd.Wait()
					t.Fatalf("no question on stderr: %v\n%s", err, stderr.String())
				}
				stderr.WriteByte(b)
			}
			if _, err := ptmx.Write([]byte(tc.answer)); err != nil {
				t.Fatal(err)
			}
			rest, _ := readAll(r)
			stderr.Write(rest)
			err = cmd.Wait()
			if got := lines(t, file) == 1; got != tc.sent || (err == nil) != tc.sent {
				t.Errorf("answer %q: sent %v, exit %v, want sent %v; stderr:\n%s", tc.answer, got, err, tc.sent, stderr.String())
			}
			for _, want := range []string{`"record" on "f"`, "config.json:1: mcpServers.f.approve", `"file":`} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("the question does not show %q:\n%s", want, stderr.String())
				}
			}
			if !tc.sent && !strings.Contains(stderr.String(), "sent nowhere") {
				t.Errorf("a denied call does not say it was sent nowhere:\n%s", stderr.String())
			}
		})
	}
}

// TestCallKeepsTypedAhead: an answer typed before the question shows is
// the answer, on a terminal that is standard input, output and error
// alike, as a person's is: nothing at start reads the terminal and drops
// what was typed ahead (issue 30: bubbletea v1's initialisation asked the
// terminal for its colours, read what was typed, and dropped it).
func TestCallKeepsTypedAhead(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	bin := binary(t)
	home := approveHome(t)
	file := filepath.Join(t.TempDir(), "calls")
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	if _, err := ptmx.Write([]byte("o\n")); err != nil { // typed ahead
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "call", "record", "--server", "f", "file="+file, "then=")
	cmd.Env = hermeticEnv(home)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	out, _ := readAll(bufio.NewReader(ptmx)) // until the command ends: EIO
	if err := cmd.Wait(); err != nil || lines(t, file) != 1 {
		t.Errorf("answer typed ahead: exit %v, %d calls sent, want the call sent; terminal:\n%s", err, lines(t, file), out)
	}
	if !bytes.Contains(out, []byte("Allow it?")) {
		t.Errorf("no question on the terminal:\n%s", out)
	}
}

func readAll(r *bufio.Reader) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(r)
	return b.Bytes(), err
}

// TestCallWithoutTerminal: with no terminal a call an approval rule covers
// is denied and not sent, unless --yes approves it, which stderr names.
func TestCallWithoutTerminal(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	bin := binary(t)
	home := approveHome(t)
	file := filepath.Join(t.TempDir(), "calls")
	run := func(extra ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"call", "record", "--server", "f", "file=" + file, "then="}, extra...)...)
		cmd.Env = hermeticEnv(home)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		return stderr.String(), err
	}
	stderr, err := run()
	if err == nil || lines(t, file) != 0 || !strings.Contains(stderr, "not a terminal") || !strings.Contains(stderr, "--yes") {
		t.Errorf("without a terminal: exit %v, %d calls sent; want a failure that names --yes and nothing sent; stderr:\n%s", err, lines(t, file), stderr)
	}
	// The hint offers only what works without a terminal: no answer to
	// give, since no one was asked (issue 30).
	if strings.Contains(stderr, "allow for this session") || !strings.Contains(stderr, "no one could be asked") {
		t.Errorf("without a terminal: the hint offers an answer no one can give, or does not say no one was asked; stderr:\n%s", stderr)
	}
	stderr, err = run("--yes")
	if err != nil || lines(t, file) != 1 || !strings.Contains(stderr, `--yes approves the call of "record" on "f"`) {
		t.Errorf("with --yes: exit %v, %d calls sent; want one call, the approval named; stderr:\n%s", err, lines(t, file), stderr)
	}
	// echo matches no rule: no question, no --yes needed.
	cmd := exec.Command(bin, "call", "echo", "--server", "f", "text=hi")
	cmd.Env = hermeticEnv(home)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "hi") {
		t.Errorf("echo: %v\n%s", err, out)
	}
}
