package main

import (
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/exepages"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// How serve gives back the pages of its binary (internal/exepages), which
// count in its RSS: once its start-up is over, before it says it serves
// (releaseStartupPages), once more after the first quiet pagesQuiet, again
// each time it has been idle for pagesIdle after work, and after each
// server's one-off work (quietPages.oneOff): a lazy server's start and the
// catalog's record of its lists run SQLite, the supervisor's start and
// go-sdk's listing, code that calls never touch again.
// Start-up does not quite end where
// serve says it serves: starting the HTTP server and the first
// collections touch code and function tables that serving does not need
// again, some 5 to 12 MB of them mapped with their neighbours
// (fault-around); and a burst of calls leaves the pages of every path it
// took mapped. Idle, serve needs about 1 MB of them. A page given back
// costs a minor fault when it is used again: the first call after a
// release pays those of its path, a few milliseconds (docs/serve.md,
// Memory), so after start-up's tail serve waits for a long quiet spell.
const (
	pagesQuiet = time.Second // start-up's tail: quiet this long, release
	pagesIdle  = time.Minute // then: idle this long after work, release
)

// releaseStartupPages gives back the pages of the binary that start-up
// mapped, after a collection: the garbage of start-up goes, and the
// collector's own pass over it is done before, not after, the pages go.
func releaseStartupPages(logger *slog.Logger) {
	runtime.GC()
	if _, err := exepages.Release(); err != nil {
		logger.Warn("start-up pages not released", "err", err)
	}
}

// quietPages counts serve's work (requests, calls) and tells when to
// release the binary's pages: after a tick with no work that follows work
// (or start-up).
type quietPages struct {
	work atomic.Uint64
	kick chan struct{} // oneOff's: a release is due; made by newQuietPages

	// Owned by run.
	last  uint64
	clean bool // released since the last work seen
}

func newQuietPages() *quietPages { return &quietPages{kick: make(chan struct{}, 1)} }

// oneOff notes that one-off work has ended (a server connected, or its
// lists were stored): run releases the pages at once, or pagesQuiet after
// its last release if that was sooner, so that a burst of servers starting
// costs one release, not one each.
func (q *quietPages) oneOff() {
	select {
	case q.kick <- struct{}{}:
	default: // one is due already
	}
}

// saw notes work: a call, a request.
func (q *quietPages) saw() { q.work.Add(1) }

// onCall is an Options.OnCall that notes the call and passes it to next.
func (q *quietPages) onCall(next func(proxy.CallRecord)) func(proxy.CallRecord) {
	return func(c proxy.CallRecord) {
		q.saw()
		next(c)
	}
}

// handler notes each request h serves.
func (q *quietPages) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q.saw()
		h.ServeHTTP(w, r)
	})
}

// tick looks at the work done since the last tick and reports whether to
// release the pages now: no work since, and work (or start-up) before.
func (q *quietPages) tick() (release bool) {
	if n := q.work.Load(); n != q.last {
		q.last, q.clean = n, false
		return false
	}
	if q.clean {
		return false
	}
	q.clean = true
	return true
}

// run calls release each time tick says so, ticking every quiet until
// the first release (start-up's tail) and every idle after it, until ctx
// ends: serve is given back its pages idle and after pagesIdle to 2 ×
// pagesIdle without work. It also releases when oneOff asks, at most once
// every quiet. quiet and idle are pagesQuiet and pagesIdle outside tests.
func (q *quietPages) run(ctx context.Context, quiet, idle time.Duration, release func()) {
	q.last = q.work.Load()
	t := time.NewTimer(quiet)
	defer t.Stop()
	every := quiet
	last := time.Now() // start-up's release (releaseStartupPages) comes about now
	var due <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if q.tick() {
				release()
				last, every = time.Now(), idle
				due = nil // this release serves a one-off release waiting too
			}
			t.Reset(every)
		case <-q.kick:
			if wait := quiet - time.Since(last); wait > 0 {
				if due == nil {
					due = time.After(wait)
				}
				continue
			}
			release()
			last = time.Now()
		case <-due:
			due = nil
			release()
			last = time.Now()
		}
	}
}
