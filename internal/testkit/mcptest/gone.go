package mcptest

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Alive reports whether pid runs and is not a zombie (Linux: /proc).
func Alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

// WaitGone waits until none of pids is alive, and fails the test if one
// still is after 30 s. There is no event for the end of a process that is
// not one's child, so it polls /proc; the deadline is generous: a test that
// uses it is about whether processes end, not how fast.
func WaitGone(t testing.TB, what string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left []int
		for _, pid := range pids {
			if Alive(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: processes %v still running after 30s", what, left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
