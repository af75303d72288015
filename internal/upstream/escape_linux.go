package upstream

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
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

// killMarked kills every process of this user whose environment holds
// mark, over and over while it finds some (a marked process may start
// another as it dies), and waits, at most markGone, until they are gone.
// It returns the pids it killed.
func killMarked(mark string) []int {
	if mark == "" {
		return nil
	}
	var killed []int
	deadline := time.Now().Add(markGone)
	for {
		found := marked(mark)
		for _, pid := range found {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
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
// environment holds markEnv=mark.
func marked(mark string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(markEnv + "=" + mark + "\x00")
	self := os.Getpid()
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !(bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...))) {
			continue
		}
		if st, err := supervisor.ReadStat(pid); err == nil && !st.Zombie {
			out = append(out, pid)
		}
	}
	return out
}
