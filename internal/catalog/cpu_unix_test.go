//go:build unix

package catalog

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used, all
// threads: a busy machine slows the wall clock of a benchmark, not this.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
