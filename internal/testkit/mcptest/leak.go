package mcptest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// reapTimeout bounds how long CheckNoLeaks waits for processes to go away: a
// killed process needs a moment before its parent reaps it.
const reapTimeout = 2 * time.Second

// CheckNoLeaks fails the test if processes started during it outlive it.
//
// Call it first in the test, so that its check runs after every other
// cleanup (cleanups run last registered, first). When the test ends it scans
// /proc for processes that belong to the test binary:
//
//   - descendants of the test process, following parent pids, and
//   - processes whose environment holds OwnerEnv=<test pid>, which finds
//     grandchildren reparented to init or a subreaper after their parent
//     died. The helpers of this package put OwnerEnv in every child's
//     environment, and CheckNoLeaks sets it in the test process's own
//     environment (with t.Setenv) so that processes started by the code under
//     test inherit it too.
//
// Processes that already belonged to the test binary when CheckNoLeaks was
// called are not this test's and are ignored. Survivors are polled for up to
// two seconds, then the test fails naming each (pid, command line) and they
// are killed, so that one leak does not spill into later tests. A zombie
// counts as a leak: it has exited but nobody waited for it.
//
// Since every process of the test binary counts, the test must not run in
// parallel with others: t.Setenv panics in a parallel test or subtest of one.
// Where there is no /proc, CheckNoLeaks logs that and checks nothing.
func CheckNoLeaks(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Logf("not checking for leaked processes: %v", err)
		return
	}
	self := os.Getpid()
	t.Setenv(OwnerEnv, strconv.Itoa(self))
	before, err := owned(self)
	if err != nil {
		t.Fatalf("checking for leaked processes: %v", err)
	}
	t.Cleanup(func() {
		left, err := survivors(self, before)
		if err != nil {
			t.Errorf("checking for leaked processes: %v", err)
			return
		}
		if len(left) == 0 {
			return
		}
		var b strings.Builder
		for _, p := range left {
			fmt.Fprintf(&b, "\n\tpid %d: %s", p.pid, p.describe())
			if pr, err := os.FindProcess(p.pid); err == nil {
				_ = pr.Kill()
			}
		}
		t.Errorf("processes outlived the test (now killed):%s", b.String())
	})
}

// survivors polls, for up to reapTimeout, until no process other than those in
// before belongs to self, and returns those that remain.
func survivors(self int, before []proc) ([]proc, error) {
	deadline := time.Now().Add(reapTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		now, err := owned(self)
		if err != nil {
			return nil, err
		}
		now = slices.DeleteFunc(now, func(p proc) bool {
			return slices.ContainsFunc(before, p.same)
		})
		if len(now) == 0 || time.Now().After(deadline) {
			return now, nil
		}
		<-tick.C
	}
}

// A proc is a process as /proc/<pid>/stat shows it.
type proc struct {
	pid, ppid int
	state     byte   // R, S, D, Z (zombie), T, …
	start     uint64 // start time in clock ticks after boot; with pid, it names one process
	comm      string // executable name, possibly truncated
}

// same reports whether p and q are the same process (pids are reused).
func (p proc) same(q proc) bool { return p.pid == q.pid && p.start == q.start }

// describe returns p's command line, or its name where that is gone.
func (p proc) describe() string {
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.pid))
	s := strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	if s == "" {
		s = "[" + p.comm + "]"
	}
	if p.state == 'Z' {
		s += " (zombie: exited, never waited for)"
	}
	return s
}

// owned returns the processes other than self that descend from self or
// carry OwnerEnv=self in their environment, ordered by pid.
func owned(self int) ([]proc, error) {
	procs, err := readProcs()
	if err != nil {
		return nil, err
	}
	mark := []byte(OwnerEnv + "=" + strconv.Itoa(self))
	var out []proc
	for pid, p := range procs {
		if pid != self && (descends(procs, pid, self) || hasEnv(pid, mark)) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b proc) int { return a.pid - b.pid })
	return out, nil
}

// descends reports whether pid has ancestor in its parent chain.
func descends(procs map[int]proc, pid, ancestor int) bool {
	for range 64 { // bounds a chain that changes while /proc is read
		p, ok := procs[pid]
		if !ok || p.ppid == 0 {
			return false
		}
		if p.ppid == ancestor {
			return true
		}
		pid = p.ppid
	}
	return false
}

// hasEnv reports whether the initial environment of pid holds entry. It is
// false where the environment cannot be read (another user's process, or one
// that has exited).
func hasEnv(pid int, entry []byte) bool {
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return false
	}
	for e := range bytes.SplitSeq(env, []byte{0}) {
		if bytes.Equal(e, entry) {
			return true
		}
	}
	return false
}

// readProcs reads the stat of every process in /proc, by pid. A process that
// exits while /proc is read is left out.
func readProcs() (map[int]proc, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("reading /proc: %w", err)
	}
	procs := make(map[int]proc, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue // not a process
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading /proc: %w", err)
		}
		p, err := parseStat(pid, stat)
		if err != nil {
			return nil, fmt.Errorf("reading /proc: %w", err)
		}
		procs[pid] = p
	}
	return procs, nil
}

// parseStat parses /proc/<pid>/stat (see proc(5)): "pid (comm) state ppid …",
// where comm may hold spaces and parentheses, and starttime is field 22.
func parseStat(pid int, stat []byte) (proc, error) {
	open, closing := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || closing < open {
		return proc{}, fmt.Errorf("parsing /proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(stat[closing+1:])) // f[0] is field 3, state
	if len(f) < 20 || len(f[0]) != 1 {
		return proc{}, fmt.Errorf("parsing /proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return proc{}, fmt.Errorf("parsing /proc/%d/stat: ppid: %w", pid, err)
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return proc{}, fmt.Errorf("parsing /proc/%d/stat: starttime: %w", pid, err)
	}
	return proc{pid: pid, ppid: ppid, state: f[0][0], start: start, comm: string(stat[open+1 : closing])}, nil
}
