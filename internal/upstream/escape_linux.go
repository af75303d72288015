package upstream

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/upstream/internal/supervisor"
)

// What leaves a server's process group: a grandchild that called setsid,
// or a daemon that forked twice, is out of reach of the signal that ends
// the group, and, once its parent is gone, no longer anyone's descendant
// but init's. A supervisor (Options.Supervise) is a subreaper that adopts
// and ends such processes. Without one, a pool finds them by a mark: every
// stdio child starts with markEnv set to the pool's mark, which what it
// starts inherits, and the pool's Close, or the sweep of the next pool
// after this one died, ends every process of this user that carries it.
// A process that empties its environment, or that this user may not read
// (a set-user-ID program), keeps running.

// markEnv is the variable that carries a pool's mark into its stdio
// children's environments.
const markEnv = "SWITCHBOARD_POOL"

// markGone bounds how long Close waits for the marked processes it
// killed to be gone.
const markGone = 2 * time.Second

// newMark returns a mark no other pool has: this process's pid and random
// bytes.
func newMark() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}

// A pidWindow is where a mark made at one moment can be found: the pids
// allocated since. Every process that carries a pool's mark descends from
// a server the pool started after making it, and Linux hands out pids in
// turn (the last one allocated is ns_last_pid), wrapping at pid_max. So
// Close need not read the environment of every process of the machine
// (some 4 µs each: a developer's machine runs hundreds, and a cold call
// paid for all of them, 11 ms with 500) but only of the pids allocated
// since the mark: a handful for a command that does one thing.
//
// That holds while the pids have not come round once more. No counter
// says so, so the window is trusted only for the time pid_max allocations
// take at lapRate, a rate no machine's work forks at (Linux allocates pids
// under one lock): 33 ms for a pid_max of 32768, 4.2 s for 4194304. After
// that, or where the facts cannot be read (another pid namespace's /proc,
// no ns_last_pid), every process is read, as before. The mark finds what a
// server starts and forgets, not what a server hides: one that means to
// leave a process behind empties its environment, which no window decides.
type pidWindow struct {
	last  int       // ns_last_pid when the mark was made
	max   int       // pid_max
	since time.Time // when
}

// lapRate bounds the pids a machine allocates a second.
const lapRate = 1_000_000

// openPidWindow returns the window that starts now, or the zero window
// (every process) when the facts cannot be read.
func openPidWindow() pidWindow {
	if self, err := os.Readlink("/proc/self"); err != nil || self != strconv.Itoa(os.Getpid()) {
		return pidWindow{} // a /proc of another pid namespace
	}
	last, ok1 := readProcInt("/proc/sys/kernel/ns_last_pid")
	max, ok2 := readProcInt("/proc/sys/kernel/pid_max")
	if !ok1 || !ok2 || last <= 0 || max <= last {
		return pidWindow{}
	}
	return pidWindow{last: last, max: max, since: time.Now()}
}

// span returns the pids allocated since w opened, as the interval from
// first to to with a wrap from max-1 to 1 when first > to, and whether
// the window can be trusted now. now is the pid allocated last; elapsed
// is the time since w opened.
func (w pidWindow) span(now int, elapsed time.Duration) (first, to int, ok bool) {
	if w.max == 0 || now <= 0 || now >= w.max || elapsed >= time.Duration(w.max)*time.Second/lapRate {
		return 0, 0, false
	}
	if now == w.last {
		return 0, 0, true // nothing allocated
	}
	first = w.last + 1
	if first >= w.max {
		first = 1
	}
	return first, now, true
}

// current returns the window as it stands: the pids allocated since it
// opened (see span), and whether it can be trusted.
func (w pidWindow) current() (first, to int, ok bool) {
	now, ok := readProcInt("/proc/sys/kernel/ns_last_pid")
	if !ok {
		return 0, 0, false
	}
	return w.span(now, time.Since(w.since))
}

// width is the number of pids from first to to, wrapping at max.
func (w pidWindow) width(first, to int) int {
	switch {
	case first == 0:
		return 0
	case first <= to:
		return to - first + 1
	default:
		return w.max - first + to
	}
}

// each calls f with every pid from first to to, wrapping at max; with
// none when first is 0.
func (w pidWindow) each(first, to int, f func(pid int)) {
	for pid := first; first != 0; pid++ {
		if pid == w.max {
			pid = 1
		}
		f(pid)
		if pid == to {
			return
		}
	}
}

// holds reports whether pid is from first to to, wrapping at max.
func holds(first, to, pid int) bool {
	if first == 0 || pid <= 0 {
		return false
	}
	if first <= to {
		return first <= pid && pid <= to
	}
	return pid >= first || pid <= to
}

// maxWindowPids is the widest window whose pids marked tries one by one;
// a wider one is filtered from /proc's listing instead, which a busy
// machine's pid_max of millions would otherwise outgrow. A variable for
// the tests.
var maxWindowPids = 4096

func readProcInt(path string) (int, bool) {
	var buf [32]byte
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	n, err := syscall.Read(fd, buf[:])
	syscall.Close(fd)
	if err != nil || n <= 0 {
		return 0, false
	}
	v, err := strconv.Atoi(string(bytes.TrimSpace(buf[:n])))
	return v, err == nil
}

// killMarked kills every process of this user whose environment holds
// mark, over and over while it finds some (a marked process may start
// another as it dies), and waits, at most markGone, until they are gone.
// It looks only in w, unless w cannot be trusted. It returns the pids it
// killed.
func killMarked(mark string, w pidWindow) []int {
	if mark == "" {
		return nil
	}
	var killed []int
	deadline := time.Now().Add(markGone)
	for {
		found := marked(mark, w)
		for _, pid := range found {
			if syscall.Kill(pid, syscall.SIGKILL) == nil && !slices.Contains(killed, pid) {
				killed = append(killed, pid)
			}
		}
		if len(found) == 0 || time.Now().After(deadline) {
			return killed
		}
		// A process killed is gone once its parent (init, if it was an
		// orphan) has reaped it; zombies are not counted by marked.
		time.Sleep(5 * time.Millisecond)
	}
}

// marked returns the living processes, other than this one, whose
// environment holds markEnv=mark: those of w, or of the whole machine
// when w cannot be trusted. A process whose first thread has exited (a
// zombie to /proc, its environment unreadable) while another runs on is
// found by that one.
func marked(mark string, w pidWindow) []int {
	m := markReader{want: []byte(markEnv + "=" + mark + "\x00"), self: os.Getpid()}
	first, to, trusted := w.current()
	if trusted && w.width(first, to) <= maxWindowPids {
		// One by one: what was allocated since holds threads too, whose
		// environment is their process's.
		w.each(first, to, func(pid int) {
			if carries, _ := m.carries(pid); carries {
				m.add(tgid(pid))
			}
		})
		return m.found
	}
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range names { // processes, not threads
		pid, err := strconv.Atoi(name)
		if err != nil || trusted && !holds(first, to, pid) {
			continue
		}
		if carries, unread := m.carries(pid); carries || unread && m.threadCarries(pid) {
			m.add(pid)
		}
	}
	return m.found
}

// A markReader reads environments for a mark into one buffer, with a
// system call for each step (os.ReadFile costs /proc's files ten).
type markReader struct {
	want  []byte
	self  int
	buf   []byte
	found []int
}

// add adds a process to those found, once.
func (m *markReader) add(pid int) {
	if pid > 0 && pid != m.self && !slices.Contains(m.found, pid) {
		m.found = append(m.found, pid)
	}
}

// carries reports whether pid, a process's or a thread's, is alive, not
// this process, and its environment holds the mark. unread reports an
// environment that could be opened but not read, as a process's whose
// first thread has exited.
func (m *markReader) carries(pid int) (carries, unread bool) {
	if pid == m.self {
		return false, false
	}
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/environ", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		// No such pid, or not this user's; or a process whose first
		// thread has exited (no such process, as its environment says).
		return false, err == syscall.ESRCH
	}
	if m.buf == nil {
		m.buf = make([]byte, 8<<10)
	}
	env := m.buf[:0]
	for {
		if len(env) == cap(env) {
			env = append(env, 0)[:len(env)]
		}
		n, err := syscall.Read(fd, env[len(env):cap(env)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			unread = err != nil || len(env) == 0
			break
		}
		env = env[:len(env)+n]
	}
	syscall.Close(fd)
	m.buf = env[:0]
	if !bytes.HasPrefix(env, m.want) && !bytes.Contains(env, append([]byte{0}, m.want...)) {
		return false, unread
	}
	st, err := supervisor.ReadStat(pid)
	return err == nil && !st.Zombie, false
}

// threadCarries reports whether pid is a process whose first thread has
// exited and another thread of which carries the mark: /proc lists such a
// process, but only its threads' environments can be read.
func (m *markReader) threadCarries(pid int) bool {
	if st, err := supervisor.ReadStat(pid); err != nil || !st.Zombie {
		return false
	}
	d, err := os.Open("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return false
	}
	tids, _ := d.Readdirnames(-1)
	d.Close()
	for _, name := range tids {
		if tid, err := strconv.Atoi(name); err == nil && tid != pid {
			if carries, _ := m.carries(tid); carries {
				return true
			}
		}
	}
	return false
}

// tgid returns the process of pid, a process's or a thread's id; 0 when
// it is gone.
func tgid(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return 0
			}
			return n
		}
	}
	return 0
}
