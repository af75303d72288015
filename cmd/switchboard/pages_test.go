package main

import (
	"context"
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
