package upstream

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream/internal/supervisor"
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

// TestPidWindowEach holds the pids marked tries one by one to holds and
// width: every pid of the window once, in order, none outside it.
func TestPidWindowEach(t *testing.T) {
	w := pidWindow{max: 10}
	for _, c := range []struct {
		first, to int
		want      []int
	}{
		{0, 0, nil},
		{5, 5, []int{5}},
		{3, 7, []int{3, 4, 5, 6, 7}},
		{8, 2, []int{8, 9, 1, 2}}, // wrapped
		{9, 1, []int{9, 1}},
		{1, 9, []int{1, 2, 3, 4, 5, 6, 7, 8, 9}},
	} {
		var got []int
		w.each(c.first, c.to, func(pid int) { got = append(got, pid) })
		if !slices.Equal(got, c.want) {
			t.Errorf("each(%d, %d) = %v; want %v", c.first, c.to, got, c.want)
		}
		if len(got) != w.width(c.first, c.to) {
			t.Errorf("each(%d, %d) gave %d pids; width says %d", c.first, c.to, len(got), w.width(c.first, c.to))
		}
		for pid := range w.max {
			if holds(c.first, c.to, pid) != slices.Contains(got, pid) {
				t.Errorf("holds(%d, %d, %d) = %v, each disagrees", c.first, c.to, pid, holds(c.first, c.to, pid))
			}
		}
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

// TestMarkedWindow starts processes that carry a mark: one before the
// window opens, as a pool's mark is made before its first server starts,
// and two after, one of them a process whose first thread has exited
// while another runs on (a zombie to /proc, its environment unreadable
// but by that thread). The window's scan finds the two by reading only
// the environments of the pids allocated since, and reports processes,
// not their threads (they share its pid space and its environment). A
// window that cannot be trusted any more reads every process and finds
// all three.
func TestMarkedWindow(t *testing.T) {
	mark := newMark()
	// One thread: a Go program's would start threads after the window
	// opened, and a thread that carries the mark reports its process.
	before := startSleep(t, mark)
	w := openPidWindow()
	if w.max == 0 {
		t.Fatal("no pid window on this Linux: /proc/sys/kernel/ns_last_pid or pid_max unreadable, or /proc of another namespace")
	}
	after := startMarked(t, mark) // a Go program: several threads
	leaderless := startLeaderless(t, mark)
	// The lap bound is TestPidWindowSpan's; here the window is taken as
	// opened just now, however long its scans take on a busy machine.
	fresh := func(w pidWindow) pidWindow {
		w.since = time.Now().Add(time.Hour)
		return w
	}
	sorted := func(pids ...int) []int {
		slices.Sort(pids)
		return pids
	}
	since := sorted(after, leaderless)

	// Had the scan read every process, it would have found the first
	// too: a pool's own mark cannot be in it.
	if found := sorted(marked(mark, fresh(w))...); !slices.Equal(found, since) {
		t.Fatalf("the window's scan found %v; want %v, not the process started before the window, %d", found, since, before)
	}

	stale := w
	stale.since = time.Now().Add(-time.Hour) // the pids may have come round since
	if found, want := sorted(marked(mark, stale)...), sorted(before, after, leaderless); !slices.Equal(found, want) {
		t.Fatalf("a stale window's scan found %v; want %v", found, want)
	}

	// A window wider than marked tries pid by pid is read from /proc's
	// listing, and still only within it.
	defer func(n int) { maxWindowPids = n }(maxWindowPids)
	maxWindowPids = 1
	if found := sorted(marked(mark, fresh(w))...); !slices.Equal(found, since) {
		t.Fatalf("the window's scan through /proc's listing found %v; want %v, not %d", found, since, before)
	}
	maxWindowPids = 4096

	if killed := sorted(killMarked(mark, fresh(w))...); !slices.Equal(killed, since) {
		t.Fatalf("killMarked killed %v; want %v", killed, since)
	}
}

// startSleep starts sleep, one thread, with mark in its environment, and
// returns its pid.
func startSleep(t *testing.T, mark string) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	cmd.Env = append(os.Environ(), markEnv+"="+mark)
	return start(t, cmd)
}

// start starts cmd and returns its pid; the test's end kills and reaps it.
func start(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}

// awaitProc waits until cond holds of what /proc shows, failing the test
// after 10 s. Another process's state in /proc has no event to wait on,
// so it is polled.
func awaitProc(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// leaderlessEnv makes the test binary a process whose first thread
// exits while another runs on; startLeaderless starts one.
const leaderlessEnv = "SWITCHBOARD_TEST_LEADERLESS"

func init() {
	if os.Getenv(leaderlessEnv) == "" {
		return
	}
	// Package initialisation runs on the first thread, locked to it.
	ready := make(chan struct{})
	go func() {
		runtime.LockOSThread() // another thread, which lives on
		close(ready)
		for {
			// A timer, not select{}: with every goroutine blocked
			// forever, the runtime would end the process as deadlocked.
			time.Sleep(time.Hour)
		}
	}()
	<-ready
	os.Stdout.WriteString("ready\n")
	syscall.RawSyscall(syscall.SYS_EXIT, 0, 0, 0) // this thread only
}

// startLeaderless starts a process with mark in its environment whose
// first thread exits while another runs on, and returns its pid once
// /proc shows its first thread a zombie.
func startLeaderless(t *testing.T, mark string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), markEnv+"="+mark, leaderlessEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	pid := start(t, cmd)
	said := make(chan string, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			line += " (" + err.Error() + ")"
		}
		said <- line
	}()
	select {
	case line := <-said:
		if line != "ready\n" {
			t.Fatalf("the leaderless process said %q", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the leaderless process said nothing in 10s")
	}
	awaitProc(t, fmt.Sprintf("the first thread of %d exits", pid), func() bool {
		st, err := supervisor.ReadStat(pid)
		return err == nil && st.Zombie
	})
	return pid
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
	if _, err := cmd.StdinPipe(); err != nil { // it runs while its stdin is open
		t.Fatal(err)
	}
	pid := start(t, cmd)
	// Its threads start with the Go runtime; wait for them, so that the
	// scan has threads to pass over.
	awaitProc(t, fmt.Sprintf("the fixture %d starts a second thread", pid), func() bool {
		tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		return len(tasks) > 1
	})
	return pid
}
