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

// run releases after start-up's tail, then after work once quiet again.
func TestQuietPagesRun(t *testing.T) {
	q := &quietPages{}
	released := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.run(ctx, time.Millisecond, time.Millisecond, func() { released <- struct{}{} })
	}()
	<-released // start-up's tail
	q.saw()
	<-released // the work's
	cancel()
	<-done
}

// A server's one-off work (oneOff) releases the pages again, even with no
// work seen and long before the idle release.
func TestQuietPagesOneOff(t *testing.T) {
	q := newQuietPages()
	released := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.run(ctx, time.Millisecond, time.Hour, func() { released <- struct{}{} })
	}()
	<-released // start-up's tail
	q.oneOff()
	<-released // the server's start
	cancel()
	<-done
}

// oneOff releases at most once every quiet: kicks that come sooner after
// the last release wait for its end, so a burst of servers starting costs
// one release.
func TestQuietPagesOneOffWaits(t *testing.T) {
	q := newQuietPages()
	var n int
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.run(ctx, time.Hour, time.Hour, func() { n++ })
	}()
	for range 3 {
		q.oneOff()
		for len(q.kick) > 0 { // until run has taken it: its handling ends before run looks at ctx again
			runtime.Gosched()
		}
	}
	cancel()
	<-done
	if n != 0 {
		t.Errorf("%d releases within quiet of start-up's, want 0", n)
	}
}
