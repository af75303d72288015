package upstream

import (
	"context"
	"sync"
	"time"
)

// withTimeout bounds ctx by d, with errDeadline as the cause when d elapses.
// The bound can be paused (see pauseTimeouts): while a login waits for the
// user in a browser, the request timeout does not count that time.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	parent, _ := ctx.Value(timeoutKey{}).(*timeout)
	ctx, cancel := context.WithCancelCause(ctx)
	t := &timeout{d: d, parent: parent}
	t.timer = time.AfterFunc(d, func() { cancel(errDeadline) })
	return context.WithValue(ctx, timeoutKey{}, t), func() {
		t.stop()
		cancel(context.Canceled)
	}
}

type timeoutKey struct{}

// A timeout is the pausable bound of withTimeout.
type timeout struct {
	d      time.Duration
	parent *timeout

	mu      sync.Mutex
	timer   *time.Timer
	paused  int
	stopped bool
}

func (t *timeout) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	t.timer.Stop()
}

func (t *timeout) pause() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.paused++; t.paused == 1 {
		t.timer.Stop()
	}
}

// resume restarts the whole timeout: the work left after the wait gets
// the full bound again.
func (t *timeout) resume() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.paused--; t.paused == 0 && !t.stopped {
		t.timer.Reset(t.d)
	}
}

// pauseTimeouts stops every timeout of ctx made by withTimeout until resume
// is called.
func pauseTimeouts(ctx context.Context) (resume func()) {
	var ts []*timeout
	for t, _ := ctx.Value(timeoutKey{}).(*timeout); t != nil; t = t.parent {
		t.pause()
		ts = append(ts, t)
	}
	return func() {
		for _, t := range ts {
			t.resume()
		}
	}
}
