//go:build unix

package mcptest

import (
	"bufio"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestOwned checks that the scan behind CheckNoLeaks finds a child of the
// test process and an orphaned grandchild that carries OwnerEnv, and that
// killing them empties it.
func TestOwned(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc: %v", err)
	}
	self := os.Getpid()
	before, err := owned(self)
	if err != nil {
		t.Fatal(err)
	}

	// A child, found through its parent pid.
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })

	// A grandchild whose parent exits at once, so it is reparented away from
	// the test process and found only through OwnerEnv.
	sh := Command{Path: "/bin/sh", Args: []string{"-c", "sleep 60 & echo $!"}, Env: []string{ownerMark()}}.Cmd(t)
	out, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading grandchild pid: %v", err)
	}
	if err := sh.Wait(); err != nil {
		t.Fatalf("running sh: %v", err)
	}
	orphan, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("reading grandchild pid: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(orphan, syscall.SIGKILL) })

	got, err := owned(self)
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{child.Process.Pid, orphan} {
		if !slices.ContainsFunc(got, func(p proc) bool { return p.pid == pid }) {
			t.Errorf("owned(%d) = %v, missing pid %d", self, got, pid)
		}
	}

	_ = child.Process.Kill()
	_ = child.Wait()
	_ = syscall.Kill(-sh.Process.Pid, syscall.SIGKILL) // the orphan kept sh's group
	left, err := survivors(self, before)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("after killing: survivors = %v, want none", left)
	}
}

func TestParseStat(t *testing.T) {
	stat := "4242 (a (weird) name) S 17 4242 4242 0 -1 4194304 90 0 0 0 0 0 0 0 20 0 1 0 987654 1000 100\n"
	got, err := parseStat(4242, []byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	want := proc{pid: 4242, ppid: 17, state: 'S', start: 987654, comm: "a (weird) name"}
	if got != want {
		t.Errorf("parseStat = %+v, want %+v", got, want)
	}
	if _, err := parseStat(1, []byte("1 (init")); err == nil {
		t.Error("parseStat of a truncated stat: got nil error")
	}
}
