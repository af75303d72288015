package gateway

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// serverErrors lists failed by server name.
func serverErrors(failed map[string]error) []proxy.ServerError {
	var out []proxy.ServerError
	for _, name := range sortedKeys(failed) {
		out = append(out, proxy.ServerError{Server: name, ErrorClass: errorClass(failed[name]), Error: failed[name].Error()})
	}
	return out
}

// errorClass is the upstream class of err, or "".
func errorClass(err error) string {
	var ue *upstream.Error
	if errors.As(err, &ue) {
		return string(ue.Class)
	}
	return ""
}

// failureMarks remembers, per server, the last failure and connection this
// engine recorded in the catalog, so that each is written once.
type failureMarks struct {
	mu   sync.Mutex
	seen map[string]failureMark
}

type failureMark struct {
	errorAt time.Time
	gen     uint64
}

// news reports whether st shows a failure not recorded yet, and a
// connection made since the last one recorded (the server answered).
func (m *failureMarks) news(st upstream.Status) (failed, answered bool) {
	m.mu.Lock()
	old := m.seen[st.Name]
	m.mu.Unlock()
	failed = !st.ErrorAt.IsZero() && !st.ErrorAt.Equal(old.errorAt) && recordable(st.ErrorClass)
	answered = st.Generation != old.gen && !st.ConnAt.IsZero()
	return failed, answered
}

// mark notes that what st shows is recorded.
func (m *failureMarks) mark(st upstream.Status) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = map[string]failureMark{}
	}
	m.seen[st.Name] = failureMark{errorAt: st.ErrorAt, gen: st.Generation}
}

// recordable reports whether a failure of class c says something about the
// server: a cancelled request or a closed pool do not.
func recordable(c upstream.Class) bool {
	return c != upstream.ClassCanceled && c != upstream.ClassClosed && c != ""
}

// recordFailures writes to the catalog what the pool learned of the named
// servers (all when none is named) since the last call: a new failure, and
// a new connection, which clears the failures recorded before it. Status in
// any process then shows a server's last failure until it answers again.
// Concurrent calls may write the same thing twice, which is harmless; a
// write that fails is tried again by the next call.
func (e *Engine) recordFailures(ctx context.Context, names ...string) {
	e.recordStatus(ctx, e.pool.Snapshot(), names...)
}

// recordStatus is recordFailures of what snap shows.
func (e *Engine) recordStatus(ctx context.Context, snap []upstream.Status, names ...string) {
	for _, st := range snap {
		if len(names) > 0 && !slices.Contains(names, st.Name) {
			continue
		}
		s, ok := e.cfg.Server(st.Name)
		if !ok {
			continue
		}
		failed, answered := e.fails.news(st)
		var err error
		if failed {
			f := catalog.Failure{Server: st.Name, Hash: e.memo.hash(s), Class: string(st.ErrorClass), Error: st.Error, At: st.ErrorAt}
			err = e.cat.PutFailure(ctx, f)
		}
		if answered && err == nil {
			err = e.cat.ClearFailure(ctx, st.Name, st.ConnAt)
		}
		switch {
		case err == nil:
			e.fails.mark(st)
		case ctx.Err() == nil:
			e.log.Warn("recording a failure", "server", st.Name, "err", err)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
