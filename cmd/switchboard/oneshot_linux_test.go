package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestCallSIGKILLEndsServers kills `switchboard call` with SIGKILL while
// its call runs, and checks the promise a command that does one thing
// keeps without a supervisor: its server, switchboard's own child, ends
// with it (PR_SET_PDEATHSIG), and what the server started, left in the
// server's process group, is ended by the next switchboard to start.
func TestCallSIGKILLEndsServers(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	dir := t.TempDir()
	sleeper, record := filepath.Join(dir, "sleeper"), filepath.Join(dir, "record")
	path, args, env := testserver.Command(testserver.Good)
	env[mcptest.OwnerEnv] = os.Getenv(mcptest.OwnerEnv)
	// The shell starts a process that outlives nothing on its own, writes
	// its pid, and becomes the fixture: the sleeper is the server's child,
	// in its group.
	script := `sleep 1000 & echo $! > "$0"; exec "$@"`
	home := serveHome(t, map[string]any{"f": map[string]any{
		"command": "sh", "args": append([]string{"-c", script, sleeper, path}, args...), "env": env,
	}}, nil)
	tmp := t.TempDir() // shared by both commands: the record of process groups is there
	cmd, done := startRecordedCall(t, home, tmp, record)
	data, err := os.ReadFile(sleeper)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("the sleeper's pid file holds %q", data)
	}
	server := onlyChild(t, cmd.Process.Pid)
	if name := cmdline(t, server); name != path {
		t.Errorf("switchboard call's child runs %q, want the server %q itself, with no supervisor between", name, path)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	mcptest.WaitGone(t, "the server, after switchboard call was killed", server)
	if !mcptest.Alive(grandchild) {
		t.Fatalf("the server's child %d ended with it: nothing left for the next start to end", grandchild)
	}
	next := switchboardCmd(t, home, "status")
	next.Env = append(next.Env, "TMPDIR="+tmp)
	if out, err := next.CombinedOutput(); err != nil {
		t.Fatalf("switchboard status: %v\n%s", err, out)
	}
	mcptest.WaitGone(t, "the server's child, after the next switchboard started", grandchild)
}

// startRecordedCall starts `switchboard call record … then=hang` on server
// "f" with TMPDIR tmp and returns once the server has recorded the call,
// with the command's Wait result in done. Another process writing a file
// sends no event, so this polls. When the test ends the command is killed
// and waited for, whatever ended it before.
func startRecordedCall(t *testing.T, home, tmp, record string) (*exec.Cmd, <-chan error) {
	t.Helper()
	cmd := switchboardCmd(t, home, "call", "record", "--server", "f", "file="+record, "then=hang")
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	cmd.Stderr = testLog{t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done, waited := make(chan error, 1), make(chan struct{})
	go func() { done <- cmd.Wait(); close(waited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-waited })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if data, _ := os.ReadFile(record); string(data) == "called\n" {
			return cmd, done
		}
		select {
		case <-waited:
			t.Fatalf("switchboard call ended before its call was recorded: %v", <-done)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("30s after switchboard call started, the server has not recorded the call")
		}
		time.Sleep(10 * time.Millisecond) // polling a file the server writes: there is no event to wait on
	}
}

// onlyChild returns the one child of pid.
func onlyChild(t *testing.T, pid int) int {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, task := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		if err != nil {
			continue // the thread ended
		}
		kids = append(kids, strings.Fields(string(data))...)
	}
	if len(kids) != 1 {
		t.Fatalf("process %d has children %v, want one", pid, kids)
	}
	child, _ := strconv.Atoi(kids[0])
	return child
}

// cmdline returns pid's argv[0].
func cmdline(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	name, _, _ := strings.Cut(string(data), "\x00")
	return name
}

// TestCallEndsWhatLeftTheGroup has the server of `switchboard call` start
// a grandchild that calls setsid, out of the server's process group, and
// checks that it is gone once the command has exited: a command that does
// one thing leaves nothing running (docs/cli.md), though it has no
// supervisor to adopt the grandchild. Nothing else ran in between.
func TestCallEndsWhatLeftTheGroup(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	path, args, env := testserver.Command(testserver.Away)
	env[mcptest.OwnerEnv] = os.Getenv(mcptest.OwnerEnv)
	home := serveHome(t, map[string]any{"f": map[string]any{"command": path, "args": args, "env": env}}, nil)
	cmd := switchboardCmd(t, home, "call", "spawn-away", "--server", "f")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("switchboard call: %v", err)
	}
	grandchild, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("spawn-away answered %q", out)
	}
	if mcptest.Alive(grandchild) {
		_ = syscall.Kill(grandchild, syscall.SIGKILL)
		t.Fatalf("the grandchild %d that left the server's group outlived switchboard call", grandchild)
	}
}

// TestSweepEndsWhatLeftTheGroup kills `switchboard call` with SIGKILL
// after its server started a grandchild that called setsid, and checks
// that the next switchboard to start ends the grandchild: it is in no
// process group the dead command recorded, but it carries the dead pool's
// mark.
func TestSweepEndsWhatLeftTheGroup(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "grandchild")
	path, args, env := testserver.Command(testserver.Away)
	env[mcptest.OwnerEnv] = os.Getenv(mcptest.OwnerEnv)
	// The shell starts the grandchild in a session of its own, writes its
	// pid, and becomes the fixture, whose "hang" keeps the call running.
	script := `setsid sleep 1000 & echo $! > "$0"; exec "$@"`
	home := serveHome(t, map[string]any{"f": map[string]any{
		"command": "sh", "args": append([]string{"-c", script, pidFile, path}, args...), "env": env,
	}}, nil)
	tmp := t.TempDir() // shared by both commands: the record of process groups is there
	cmd, done := startRecordedCall(t, home, tmp, filepath.Join(dir, "record"))
	data, _ := os.ReadFile(pidFile)
	grandchild, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("the grandchild's pid file holds %q", data)
	}
	defer syscall.Kill(grandchild, syscall.SIGKILL)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	if !mcptest.Alive(grandchild) {
		t.Fatalf("the grandchild %d ended with switchboard: nothing left for the next start to end", grandchild)
	}
	next := switchboardCmd(t, home, "status")
	next.Env = append(next.Env, "TMPDIR="+tmp)
	if out, err := next.CombinedOutput(); err != nil {
		t.Fatalf("switchboard status: %v\n%s", err, out)
	}
	mcptest.WaitGone(t, "the grandchild in a session of its own, after the next switchboard started", grandchild)
}
