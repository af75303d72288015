package upstream

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

func TestPidWindowSpan(t *testing.T) {
	w := pidWindow{last: 1000, max: 32768}
	lap := 32768 * time.Second / lapRate // 32.768 ms
	for _, c := range []struct {
		name      string
		w         pidWindow
		now       int
		elapsed   time.Duration
		first, to int
		trusted   bool
	}{
		{"nothing allocated", w, 1000, 0, 0, 0, true},
		{"some allocated", w, 1042, time.Millisecond, 1001, 1042, true},
		{"wrapped", w, 310, time.Millisecond, 1001, 310, true}, // first > to: up to max-1, then from 1
		{"last was max-1", pidWindow{last: 32767, max: 32768}, 305, 0, 1, 305, true},
		{"a lap may have passed", w, 1042, lap, 0, 0, false},
		{"just within a lap", w, 1042, lap - time.Microsecond, 1001, 1042, true},
		{"no window", pidWindow{}, 1042, 0, 0, 0, false},
		{"now unreadable", w, 0, 0, 0, 0, false},
		{"now beyond pid_max", w, 40000, 0, 0, 0, false}, // pid_max was raised: not the window's facts
	} {
		t.Run(c.name, func(t *testing.T) {
			first, to, ok := c.w.span(c.now, c.elapsed)
			if first != c.first || to != c.to || ok != c.trusted {
				t.Fatalf("span(%d, %v) = %d, %d, %v; want %d, %d, %v", c.now, c.elapsed, first, to, ok, c.first, c.to, c.trusted)
			}
		})
	}
}

func TestPidWindowHolds(t *testing.T) {
	w := pidWindow{last: 1000, max: 32768}
	for _, c := range []struct {
		first, to, width int
		in, out          []int
	}{
		{0, 0, 0, nil, []int{0, 1, 1000, 32767}},                                      // nothing allocated
		{1001, 1042, 42, []int{1001, 1020, 1042}, []int{1000, 1043, 1}},               // in turn
		{1001, 310, 32767 - 1000 + 310, []int{1001, 32767, 1, 310}, []int{311, 1000}}, // wrapped
	} {
		if got := w.width(c.first, c.to); got != c.width {
			t.Errorf("width(%d, %d) = %d; want %d", c.first, c.to, got, c.width)
		}
		for _, pid := range c.in {
			if !holds(c.first, c.to, pid) {
				t.Errorf("holds(%d, %d, %d) = false", c.first, c.to, pid)
			}
		}
		for _, pid := range c.out {
			if holds(c.first, c.to, pid) {
				t.Errorf("holds(%d, %d, %d) = true", c.first, c.to, pid)
			}
		}
	}
}

// TestMarkedWindow starts two processes that carry a mark, one before the
// window opens and one after, as a pool's mark is made before its first
// server starts. The window's scan finds the second by reading only the
// environments of the pids allocated since, and only its process, not its
// threads (they share its pid space and its environment). A window that
// cannot be trusted any more reads every process and finds both.
func TestMarkedWindow(t *testing.T) {
	mark := newMark()
	before := startMarked(t, mark)
	w := openPidWindow()
	if w.max == 0 {
		t.Fatal("no pid window on this Linux: /proc/sys/kernel/ns_last_pid or pid_max unreadable, or /proc of another namespace")
	}
	after := startMarked(t, mark) // a Go program: several threads
	// The lap bound is TestPidWindowSpan's; here the window is taken as
	// just opened, however long the fixture took to start on a busy machine.
	fresh := func(w pidWindow) pidWindow {
		w.since = time.Now()
		return w
	}

	// Had the scan read every process, it would have found the first
	// too: a pool's own mark cannot be in it.
	if found := marked(mark, fresh(w)); !slices.Equal(found, []int{after}) {
		t.Fatalf("the window's scan found %v; want [%d], not the process started before the window, %d", found, after, before)
	}

	stale := w
	stale.since = time.Now().Add(-time.Hour) // the pids may have come round since
	found := marked(mark, stale)
	slices.Sort(found)
	want := []int{min(before, after), max(before, after)}
	if !slices.Equal(found, want) {
		t.Fatalf("a stale window's scan found %v; want %v", found, want)
	}

	// A window wider than marked tries pid by pid is read from /proc's
	// listing, and still only within it.
	defer func(n int) { maxWindowPids = n }(maxWindowPids)
	maxWindowPids = 1
	if found := marked(mark, fresh(w)); !slices.Equal(found, []int{after}) {
		t.Fatalf("the window's scan through /proc's listing found %v; want [%d], not %d", found, after, before)
	}
	maxWindowPids = 4096

	if killed := killMarked(mark, fresh(w)); !slices.Equal(killed, []int{after}) {
		t.Fatalf("killMarked killed %v; want [%d]", killed, after)
	}
}

// startMarked starts the fixture server, which runs until its stdin
// closes, with mark in its environment, and returns its pid.
func startMarked(t *testing.T, mark string) int {
	t.Helper()
	path, args, env := testserver.Command(testserver.Good)
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), markEnv+"="+mark)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	})
	// Its threads start with the Go runtime; wait for them, so that the
	// scan has threads to pass over.
	deadline := time.Now().Add(10 * time.Second)
	for {
		tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/task")
		if len(tasks) > 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fixture %d started no second thread in 10s", cmd.Process.Pid)
		}
		time.Sleep(time.Millisecond)
	}
	return cmd.Process.Pid
}
