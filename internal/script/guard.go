package script

import (
	"fmt"
	"runtime/metrics"
	"time"
)

// The guard is the run's watchdog, a goroutine beside the interpreter:
//
//   - when the run's context ends (the deadline, the caller's
//     cancellation, a bound the script hit) it interrupts the interpreter,
//     which stops at its next step even in `while (true) {}`: goja checks
//     for an interrupt in its instruction loop, and a script cannot catch
//     one;
//   - every heapEvery it reads the heap (runtime/metrics, which neither
//     stops the world nor collects) and stops the script when what the
//     last collection found live has grown by more than MaxHeapGrowth
//     since the run began, or when the heap's objects, live and garbage,
//     have grown by more than twice that: too fast to wait for the next
//     collection to tell them apart.
//
// The heap is the process's, not the script's alone: goja does not
// account memory per runtime, and a string built by doubling
// (`let s = 'x'; while (1) s += s;`) grows past any bound within a few
// steps, each a single instruction that no interrupt splits. Measuring
// the heap stops it whatever built it (strings, arrays, objects); the
// prices are that concurrent work of the process counts toward the
// script's bound, which is why the bound is generous and judged on what
// is live, and that a doubling between two looks overshoots the bound by
// its last step before the script is stopped. The guard never forces a
// collection: that would stop the world, waiting on the interpreter's
// copy of a large string.
const heapEvery = 2 * time.Millisecond

type guard struct {
	done chan struct{}
	exit chan struct{}
}

func startGuard(r *run) *guard {
	g := &guard{done: make(chan struct{}), exit: make(chan struct{})}
	baseLive, baseObjects := heap()
	limit := r.opts.MaxHeapGrowth
	go func() {
		defer close(g.exit)
		t := time.NewTicker(heapEvery)
		defer t.Stop()
		for {
			select {
			case <-g.done:
				return
			case <-r.ctx.Done():
				r.vm.Interrupt(stopped{r.cause()})
				return
			case <-t.C:
				live, objects := heap()
				if live > baseLive+limit || objects > baseObjects+2*limit {
					r.interrupt(&Error{Code: CodeMemory, Message: fmt.Sprintf("the script's data grew past %d MiB: stopped; keep less in memory (a string or array built in a loop?)", limit>>20)})
				}
			}
		}
	}()
	return g
}

// close stops the guard and waits for it.
func (g *guard) close() {
	close(g.done)
	<-g.exit
}

// heap returns the bytes the last collection found live, and the bytes
// of heap objects now, live and not yet swept.
func heap() (live, objects uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		objects = s[1].Value.Uint64()
	}
	return live, objects
}
