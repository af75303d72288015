package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestServeMemoryTuning(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want memoryTuning
	}{
		{"defaults", nil, memoryTuning{gcPercent: serveGCPercent, floor: serveMemoryFloor}},
		{"GOGC set", map[string]string{"GOGC": "100"}, memoryTuning{}},
		{"GOGC off", map[string]string{"GOGC": "off"}, memoryTuning{}},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "64MiB"}, memoryTuning{gcPercent: serveGCPercent}},
		{"GOMEMLIMIT off", map[string]string{"GOMEMLIMIT": "off"}, memoryTuning{gcPercent: serveGCPercent}},
		{"both", map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"}, memoryTuning{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := serveMemoryTuning(func(k string) string { return tt.env[k] })
			if got != tt.want {
				t.Errorf("serveMemoryTuning(%v) = %+v, want %+v", tt.env, got, tt.want)
			}
		})
	}
}

func TestMemoryLimit(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		live, other, want int64
	}{
		{0, 0, 32 * mib},                    // idle: the floor
		{5 * mib, 8 * mib, 32 * mib},        // 50 clients: the floor
		{8 * mib, 8 * mib, 32 * mib},        // GOGC=200's goal at the floor
		{8*mib + 1, 8 * mib, math.MaxInt64}, // past it: no limit
		{100 * mib, 8 * mib, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64, math.MaxInt64}, // no overflow
	}
	for _, tt := range tests {
		if got := memoryLimit(32*mib, tt.live, tt.other); got != tt.want {
			t.Errorf("memoryLimit(32 MiB, live %d, other %d) = %d, want %d", tt.live, tt.other, got, tt.want)
		}
	}
}

// TestMemoryGovernor checks that the governor follows the live heap: no
// limit when it is large, back to the floor when it is gone, and
// that stopping it restores the limit it found. Each step collects until
// the governor, which runs after a collection, has set the limit.
func TestMemoryGovernor(t *testing.T) {
	prev := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prev)
	const floor = 64 << 20
	g := startMemoryGovernor(floor)
	defer g.stop()
	limit := func() int64 { return debug.SetMemoryLimit(-1) }
	waitLimit := func(what string, ok func(int64) bool) {
		t.Helper()
		for range 1000 {
			if ok(limit()) {
				return
			}
			runtime.GC()
		}
		t.Fatalf("%s: the limit is %d after 1000 collections", what, limit())
	}

	live := make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	waitLimit("with 64 MiB live", func(l int64) bool { return l == math.MaxInt64 })
	runtime.KeepAlive(live)
	live = nil
	waitLimit("with the 64 MiB gone", func(l int64) bool { return l == floor })
	g.stop()
	g.stop() // idempotent
	if l := limit(); l != math.MaxInt64 {
		t.Errorf("after stop, the limit is %d, want the %d it was before", l, int64(math.MaxInt64))
	}
}

func TestLaneGC(t *testing.T) {
	if got := laneGC(func(string) string { return "" }); got != laneGCPercent {
		t.Errorf("laneGC without GOGC = %d, want %d", got, laneGCPercent)
	}
	if got := laneGC(func(k string) string { return map[string]string{"GOGC": "300"}[k] }); got != 0 {
		t.Errorf("laneGC with GOGC=300 = %d, want 0 (the environment wins)", got)
	}
}
