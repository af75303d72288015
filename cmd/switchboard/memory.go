package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// How serve's garbage collector is tuned (docs/serve.md, Memory and what to
// tune). go-sdk allocates a fresh 32 KiB decoder buffer for every JSON value
// it decodes, so a call through the gateway leaves some 400 KB of garbage
// behind, and how much of it piles up between collections decides much of
// serve's memory under load. At 50 HTTP clients the live heap is ~5 MB and
// the runtime's other memory (goroutine stacks, the collector's metadata)
// ~8 MB; GOGC=200 alone lets the heap grow to three times the live heap,
// and the scavenger returns little of it.
const (
	// serveGCPercent is serve's GOGC unless the environment sets one: at
	// the default of 100 a transparent echo call cost the gateway ~1.2
	// times the CPU.
	serveGCPercent = 200
	// serveMemoryFloor is the soft memory limit while GOGC=200's own goal
	// fits under it (memoryLimit): the Go heap and runtime together may
	// grow to this much before the collector runs sooner than GOGC asks,
	// and the scavenger returns memory above it. At 50 clients, against no
	// limit in the same run, 24 MiB cost 1.18 and 1.19 times the CPU per
	// call (two runs) for ~7 MB less Go memory after the load but no lower
	// peak; fixed limits of 28 and 32 MiB cost 1.01 and 1.03 (one run,
	// docs/serve.md): at this much garbage per call, a limit that binds
	// costs CPU.
	serveMemoryFloor = 32 << 20
)

// laneGCPercent is serve's GOGC, unless the environment sets one, when its
// clients' tool calls take the fast lane (transparent mode over HTTP,
// front.Server.LeanCalls), which decodes nothing and leaves little
// garbage (proxy mode, where the mcp tool's calls take the lane too but
// the engine does more with each, keeps 200: 70 there cost 18% more CPU
// per call for 5 MB less at the peak, docs/serve.md):
// at 50 clients GOGC=100 lowered the peak RSS from 32.9 to 28.6 MB at the
// same CPU per call against serve's 200 (327 and 320 µs, one run of the
// bench), and 70 from 24.0 to 23.0 MB against 100 (203 and 210 µs, medians
// of three runs, docs/serve.md).
const laneGCPercent = 70

// laneGC is the GOGC serve sets once it knows its calls take the fast
// lane, or 0 to leave it: the environment's GOGC wins.
func laneGC(getenv func(string) string) int {
	if getenv("GOGC") != "" {
		return 0
	}
	return laneGCPercent
}

// memoryTuning is what serve sets: GOGC, and whether it governs the soft
// memory limit (memoryGovernor). Either is left alone when the
// environment sets GOGC or GOMEMLIMIT, which the Go runtime reads itself.
type memoryTuning struct {
	gcPercent int   // 0: leave GOGC as the runtime read it
	floor     int64 // 0: no governor
}

// serveMemoryTuning derives serve's memory tuning from its environment. A
// GOGC or GOMEMLIMIT the user set wins: the governor would fight either,
// so it runs only when neither is set.
func serveMemoryTuning(getenv func(string) string) memoryTuning {
	var t memoryTuning
	gogc, limit := getenv("GOGC"), getenv("GOMEMLIMIT")
	if gogc == "" {
		t.gcPercent = serveGCPercent
	}
	if gogc == "" && limit == "" {
		t.floor = serveMemoryFloor
	}
	return t
}

// apply sets the tuning for the process and returns what undoes it (serve
// may run inside a test process, which goes on afterwards).
func (t memoryTuning) apply() (undo func()) {
	prevGC := -1
	if t.gcPercent != 0 {
		prevGC = debug.SetGCPercent(t.gcPercent)
	}
	var g *memoryGovernor
	if t.floor != 0 {
		g = startMemoryGovernor(t.floor)
	}
	return func() {
		if g != nil {
			g.stop()
		}
		if prevGC != -1 {
			debug.SetGCPercent(prevGC)
		}
	}
}

// memoryLimit is the soft memory limit for a live heap of live bytes, the
// runtime's other memory (stacks, the collector's metadata) being other
// bytes: the floor while what GOGC=200 lets the Go memory reach anyway
// (three times the live heap, plus other) fits under it, and none once it
// does not. While it fits, the limit bounds the Go memory a burst of calls
// can take (the collector works harder only near it) and has the
// scavenger return free memory above it, which GOGC alone leaves resident;
// at larger loads it steps out of the way. A limit at GOGC=200's goal made
// the collector and the scavenger work harder (1.38 times the CPU per call
// at 150 clients, 0.78 of the calls/s, one run); a fixed limit under the
// live heap would keep the collector running back to back (the runtime
// caps that at half the CPU).
func memoryLimit(floor, live, other int64) int64 {
	const k = 1 + serveGCPercent/100
	if live > (floor-other)/k {
		return math.MaxInt64
	}
	return floor
}

// A memoryGovernor sets the soft memory limit (memoryLimit) after every
// garbage collection, from the live heap that collection found. It runs no
// goroutine of its own: it is a cleanup of an object that each collection
// finds unreachable, which re-arms itself.
type memoryGovernor struct {
	floor int64
	prev  int64 // the limit before the governor

	mu      sync.Mutex
	stopped bool
	limit   int64 // the limit last set
	samples []metrics.Sample
}

// Metrics the governor reads: the live heap as of the last collection, and
// what the soft limit counts (all memory mapped by the runtime, less what
// it has returned to the OS) to find the runtime's memory besides the heap.
var governorMetrics = []string{
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
}

func startMemoryGovernor(floor int64) *memoryGovernor {
	g := &memoryGovernor{floor: floor, samples: make([]metrics.Sample, len(governorMetrics))}
	for i, name := range governorMetrics {
		g.samples[i].Name = name
	}
	g.prev = debug.SetMemoryLimit(floor)
	g.limit = floor
	g.arm()
	return g
}

// sentinel is what a collection finds unreachable: large enough not to
// share a block of the tiny allocator with other objects, which would keep
// it alive.
type sentinel [32]byte

func (g *memoryGovernor) arm() {
	runtime.AddCleanup(new(sentinel), (*memoryGovernor).collected, g)
}

// collected runs after a collection: it sets the limit from what the
// collection found and arms the next sentinel.
func (g *memoryGovernor) collected() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	metrics.Read(g.samples)
	v := func(i int) int64 { return int64(g.samples[i].Value.Uint64()) }
	heap := v(3) + v(4) + v(5) + v(2)
	limit := memoryLimit(g.floor, v(0), max(0, v(1)-heap))
	if limit != g.limit {
		debug.SetMemoryLimit(limit)
		g.limit = limit
	}
	g.arm()
}

// stop restores the limit as it was before the governor. It is idempotent.
func (g *memoryGovernor) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.stopped {
		g.stopped = true
		debug.SetMemoryLimit(g.prev)
	}
}
