// Package lifecycle gives background goroutines an owner that stops and
// waits for them.
package lifecycle

import (
	"context"
	"sync"
)

// Group is the background work of one owner: goroutines started with Go
// while the group is open, and a context they run under. Stop closes the
// group (Go starts nothing after it) and cancels the context; Wait waits
// for every goroutine Go started. An owner's Close is Stop, then what must
// happen between (closing connections the goroutines wait on), then Wait.
// Its methods are safe for concurrent use. Use New; the zero value is not
// usable.
type Group struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex
	closed bool
}

// New returns an open group.
func New() *Group {
	g := &Group{}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	return g
}

// Context returns the context of the group's work, cancelled by Stop.
func (g *Group) Context() context.Context { return g.ctx }

// Go runs f in a goroutine that Wait waits for, and reports true; once the
// group is stopped it runs nothing and reports false.
func (g *Group) Go(f func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Go(f)
	return true
}

// Stop closes the group and cancels its context. It is idempotent and does
// not wait.
func (g *Group) Stop() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.cancel()
}

// Wait waits for every goroutine Go started. Call it after Stop: before,
// Go may start more.
func (g *Group) Wait() { g.wg.Wait() }

// Close is Stop, then Wait.
func (g *Group) Close() {
	g.Stop()
	g.Wait()
}
