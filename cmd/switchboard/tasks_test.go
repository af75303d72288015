//go:build !windows

package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestCallShowsTaskProgress: switchboard call of a tool that runs only as
// a task (the everything server's simulate-research-query) shows, on a
// terminal, the task's status as the call's progress, then prints the
// task's result. On main the server refused the call.
func TestCallShowsTaskProgress(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := everythingHome(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	cmd := exec.Command(binary(t), "call", "simulate-research-query", "topic=tides")
	cmd.Env = hermeticEnv(home)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	term, _ := readAll(bufio.NewReader(ptmx)) // until the command ends: EIO
	if err := cmd.Wait(); err != nil {
		t.Fatalf("switchboard call: %v\nterminal:\n%s", err, term)
	}
	if !strings.Contains(stdout.String(), "# Research Report: tides") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	for _, want := range []string{"working: Analyzing content", "working: Generating report"} {
		if !bytes.Contains(term, []byte(want)) {
			t.Errorf("the terminal did not show %q:\n%q", want, term)
		}
	}
}
