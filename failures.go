package switchboard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/catalog"
	"github.com/switchboard-mcp/switchboard/proxy"
	"github.com/switchboard-mcp/switchboard/upstream"
)

// ServerError is a server that could not answer a request, and why.
type ServerError struct {
	Server     string `json:"server"`
	ErrorClass string `json:"errorClass,omitempty"` // as in ServerStatus
	Error      string `json:"error"`
}

// serverErrors lists failed by server name.
func serverErrors(failed map[string]error) []ServerError {
	var out []ServerError
	for _, name := range sortedKeys(failed) {
		out = append(out, ServerError{Server: name, ErrorClass: errorClass(failed[name]), Error: failed[name].Error()})
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

// unreachedError is the error of a tool name that was not found while some
// of the servers it could be on could not be searched: the name may well
// be on one of those, so the error says why each failed.
type unreachedError struct {
	name     string
	answered []string         // the servers searched
	failed   map[string]error // the servers that could not be, with why
	sugg     []proxy.ToolRef  // close names on the servers searched
}

func (u *unreachedError) Error() string {
	var b strings.Builder
	if len(u.answered) == 0 {
		fmt.Fprintf(&b, "tool %q not found: none of the %s could be searched", u.name, plural(len(u.failed), "server", "servers"))
	} else {
		fmt.Fprintf(&b, "%v %q on the %s that answered (%s), but %d could not be searched",
			proxy.ErrUnknownTool, u.name, plural(len(u.answered), "server", "servers"), strings.Join(u.answered, ", "), len(u.failed))
	}
	if len(u.sugg) > 0 {
		var list []string
		for _, s := range u.sugg {
			list = append(list, fmt.Sprintf("%s (%s)", s.Name, s.Server))
		}
		b.WriteString("; did you mean: " + strings.Join(list, ", "))
	}
	for _, name := range sortedKeys(u.failed) {
		fmt.Fprintf(&b, "\nnot searched: %q: %s", name, brief(u.failed[name].Error(), 300))
	}
	return b.String()
}

// Is makes the error match proxy.ErrUnknownTool.
func (u *unreachedError) Is(target error) bool { return target == proxy.ErrUnknownTool }

// failedOf returns the servers an error says could not be searched.
func failedOf(err error) []ServerError {
	var u *unreachedError
	if errors.As(err, &u) {
		return serverErrors(u.failed)
	}
	return nil
}

// brief puts an error message on one line of at most n characters before
// its hint, which is kept whole (up to a bound): it says what to do.
func brief(msg string, n int) string {
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	flat := strings.Join(parts, " ")
	i := strings.Index(flat, "hint: ")
	if i < 0 {
		return shorten(flat, n)
	}
	if i > 0 && flat[i-1] == '(' {
		i--
	}
	body, hint := strings.TrimSpace(flat[:i]), flat[i:]
	return shorten(body, n) + " " + shorten(hint, 400)
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
	for _, st := range e.pool.Snapshot() {
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
