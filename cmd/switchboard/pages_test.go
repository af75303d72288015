package main

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// quietPages releases once after start-up's tail, then once after each
// spell of work that a quiet tick follows, and never twice for one.
func TestQuietPages(t *testing.T) {
	q := &quietPages{}
	steps := []struct {
		work int // work seen before the tick
		want bool
	}{
		{0, true},  // start-up's tail
		{0, false}, // released already
		{3, false}, // work since the last tick: not quiet yet
		{1, false}, // still working
		{0, true},  // quiet after work
		{0, false},
		{1, false},
		{0, true},
	}
	for i, s := range steps {
		for range s.work {
			q.saw()
		}
		if got := q.tick(); got != s.want {
			t.Fatalf("tick %d (after %d work): release = %v, want %v", i, s.work, got, s.want)
		}
	}
}

// runPages runs q with the given ticks until the returned function, which
// waits for run to return.
func runPages(t *testing.T, q *quietPages, quiet, idle time.Duration, release func()) (stop func()) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.run(ctx, quiet, idle, release)
	}()
	return func() {
		cancel()
		<-done
	}
}

// run releases after start-up's tail, then again after work once quiet,
// or after a server's one-off work (oneOff) long before the idle release.
func TestQuietPagesRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		idle time.Duration
		then func(*quietPages)
	}{
		{"work, then quiet", time.Millisecond, (*quietPages).saw},
		{"a server's one-off work", time.Hour, (*quietPages).oneOff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newQuietPages()
			released := make(chan struct{})
			stop := runPages(t, q, time.Millisecond, tc.idle, func() { released <- struct{}{} })
			<-released // start-up's tail
			tc.then(q)
			<-released
			stop()
		})
	}
}

// oneOff releases at most once every quiet: kicks that come sooner after
// the last release wait for its end, so a burst of servers starting costs
// one release.
func TestQuietPagesOneOffWaits(t *testing.T) {
	q := newQuietPages()
	var n int
	stop := runPages(t, q, time.Hour, time.Hour, func() { n++ })
	for range 3 {
		q.oneOff()
		for len(q.kick) > 0 { // until run has taken it: its handling ends before run looks at ctx again
			runtime.Gosched()
		}
	}
	stop()
	if n != 0 {
		t.Errorf("%d releases within quiet of start-up's, want 0", n)
	}
}
