package gateway

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/pinning"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// pinStore keeps the pins: a file in the state directory
// (catalog.PinFile), or the catalog in the shared store, whose replicas
// share them.
type pinStore interface {
	Pins(ctx context.Context, server string) (map[string]catalog.Pin, error)
	UpdatePins(ctx context.Context, server string, update func(map[string]catalog.Pin) []catalog.Pin) error
	Accept(ctx context.Context, server, tool, pending string) (catalog.Pin, error)
}

// PinsFile is the name of the pins file in the state directory.
const PinsFile = "pins.db"

// openPins opens the pins: the catalog's with Options.Store, else the file
// at Options.PinsPath, by default in the state directory, moving the
// catalog file's pins there as it is created. A file that cannot be opened
// leaves the pins unreadable: every tool of a pinned server is then
// quarantined (fail closed), and says why.
func (e *Engine) openPins(cat *catalog.Catalog) {
	p := &e.pol
	if e.opts.Store != nil {
		p.pins, p.pinsAt = cat, "the shared store (settings.store)"
		return
	}
	path := e.opts.PinsPath
	if path == "" {
		path = filepath.Join(e.cfg.Dirs.StateDir(), PinsFile)
		if !filepath.IsAbs(path) {
			// No home directory: no state directory to keep them in, and
			// a relative path would write wherever the process runs.
			e.log.Warn("tool pins are kept in the catalog: the state directory is unknown (set HOME, or Options.PinsPath)")
			p.pins, p.pinsAt = cat, cat.Path()
			return
		}
	}
	p.pinsAt = path
	if e.opts.Passive {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			// Status only looks: until an engine that writes creates the
			// file, the pins are where an older version kept them.
			p.pins = cat
			return
		}
	}
	err := os.MkdirAll(filepath.Dir(path), 0o700)
	var f *catalog.PinFile
	if err == nil {
		f, err = catalog.OpenPinFile(path, cat)
	}
	if err != nil {
		e.log.Warn("tool pinning: the pins cannot be read, so every tool of a pinned server is quarantined", "err", err)
		p.pins = unreadablePins{err}
		return
	}
	p.pins, p.pinFile = f, f
}

// unreadablePins is the pin store of a pins file that could not be opened.
type unreadablePins struct{ err error }

func (u unreadablePins) Pins(context.Context, string) (map[string]catalog.Pin, error) {
	return nil, u.err
}

func (u unreadablePins) UpdatePins(context.Context, string, func(map[string]catalog.Pin) []catalog.Pin) error {
	return u.err
}

func (u unreadablePins) Accept(context.Context, string, string, string) (catalog.Pin, error) {
	return catalog.Pin{}, u.err
}

// PinsError is why a server's pins could not be read or written. Every
// tool of the server is quarantined until they can be (fail closed).
type PinsError struct {
	Server string
	Where  string // the pins file, or the shared store
	Shared bool   // the pins are in the shared store
	Err    error
}

func (e *PinsError) Error() string {
	hint := fmt.Sprintf("make %s readable and writable again, or move it aside to pin every tool again as first seen (docs/policy.md)", e.Where)
	if e.Shared {
		hint = "check that the shared store answers (switchboard status), then try again"
	}
	return fmt.Sprintf("the pins of %q could not be read or written (%s): %v; every tool of %q is quarantined until they can be\nhint: %s", e.Server, e.Where, e.Err, e.Server, hint)
}

func (e *PinsError) Unwrap() error { return e.Err }

// pinState is what the engine knows of a server's pins, for one catalog
// entry of the server.
type pinState struct {
	ent  *catalog.Entry
	q    map[string]*policy.Quarantine // by tool name; nil for none
	defs []pinning.Def                 // ent's tools' definitions; nil with pin off
	err  error                         // a *PinsError: every tool is in q
	// shown are ent's tools as the agent and a host may see them: a
	// quarantined tool's approved definition instead of the offered one,
	// and no quarantined tool that has none (see policy.Quarantine.Approved).
	// It is ent.Tools when nothing is quarantined.
	shown []*mcp.Tool
}

// pinned returns what a server's pins say of the tools of its catalog
// entry; nil when the catalog has no entry for it. It never connects.
func (e *Engine) pinned(ctx context.Context, server string) *pinState {
	def, ok := e.cfg.Server(server)
	if !ok {
		return nil
	}
	ent, ok := e.cached(ctx, def)
	if !ok {
		return nil
	}
	return e.reconcile(ctx, ent)
}

// quarantined returns a server's quarantined tools, by name: those whose
// definition in the catalog differs from the one the user accepted (see
// pinning.Reconcile), and every one when the pins cannot be read. It never
// connects.
func (e *Engine) quarantined(ctx context.Context, server string) map[string]*policy.Quarantine {
	if st := e.pinned(ctx, server); st != nil {
		return st.q
	}
	return nil
}

// reconcile compares a catalog entry's tools with their pins, once per
// entry while none is quarantined: it stores new pins and pending
// definitions and records what entered quarantine in the audit trail. A
// passive engine (status) only looks: what it found is recorded by the
// engine that lists the server.
func (e *Engine) reconcile(ctx context.Context, ent *catalog.Entry) *pinState {
	e.pol.mu.Lock()
	st := e.pol.pinStates[ent.Server]
	e.pol.mu.Unlock()
	// While a tool is quarantined, the pins are read again each time:
	// another process (switchboard approve) may have accepted it.
	if st != nil && st.ent == ent && len(st.q) == 0 {
		return st
	}
	return e.judge(ctx, ent, st.defsFor(ent))
}

// judge compares ent's tools, whose definitions are defs, with their pins
// as they are now, and keeps the judgment as the server's.
func (e *Engine) judge(ctx context.Context, ent *catalog.Entry, defs []pinning.Def) *pinState {
	next := &pinState{ent: ent, shown: ent.Tools}
	if def, ok := e.cfg.Server(ent.Server); ok && e.cfg.PinModeOf(def) != config.PinOff {
		next.defs = defs
		next.q, next.err = e.comparePins(ctx, ent.Server, next.defs, e.cfg.PinModeOf(def))
		next.shown = shownTools(ent.Tools, next.q)
	}
	e.pol.mu.Lock()
	if e.pol.pinStates == nil {
		e.pol.pinStates = map[string]*pinState{}
	}
	e.pol.pinStates[ent.Server] = next
	e.pol.mu.Unlock()
	return next
}

// comparePins reconciles a server's tools with its pins and returns the
// tools quarantined. When the pins cannot be read or written, every tool
// is, and the error says why.
func (e *Engine) comparePins(ctx context.Context, server string, defs []pinning.Def, mode config.PinMode) (map[string]*policy.Quarantine, error) {
	// The definitions were hashed before any lock is taken, and the pins
	// are read first: the write transaction, which blocks other writers,
	// is taken only when there is something to write, and then only
	// compares.
	var r pinning.Reconciled
	reconcile := func(stored map[string]catalog.Pin) []catalog.Pin {
		r = pinning.Reconcile(server, stored, defs, mode, time.Now())
		return r.Write
	}
	stored, err := e.pol.pins.Pins(ctx, server)
	if err == nil {
		reconcile(stored)
		switch {
		case e.opts.Passive:
			// Status only looks: the engine that lists the server records.
			r.Events = nil
		case len(r.Write) > 0:
			err = e.pol.pins.UpdatePins(ctx, server, reconcile)
		}
	}
	if err != nil {
		// A pins file that could not be opened was logged as it was.
		if _, unopened := e.pol.pins.(unreadablePins); !unopened && ctx.Err() == nil {
			e.log.Warn("tool pinning", "server", server, "err", err)
		}
		err = &PinsError{Server: server, Where: e.pol.pinsAt, Shared: e.opts.Store != nil, Err: err}
		return pinning.Unreadable(server, defs, err), err
	}
	for _, ev := range r.Events {
		e.record(ctx, nil, ev)
		if ev.Event == policy.EventQuarantine {
			e.log.Warn("tool quarantined", "server", ev.Server, "tool", ev.Tool, "why", ev.Why)
		}
	}
	return r.Quarantined, nil
}

// defsFor returns the definitions of ent's tools, hashed once per entry.
// st may be nil.
func (st *pinState) defsFor(ent *catalog.Entry) []pinning.Def {
	if st != nil && st.ent == ent && st.defs != nil {
		return st.defs
	}
	return pinning.Definitions(ent.Tools)
}

// shownTools returns tools as the agent and a host may see them, given
// those quarantined (see pinState.shown).
func shownTools(tools []*mcp.Tool, q map[string]*policy.Quarantine) []*mcp.Tool {
	if len(q) == 0 {
		return tools
	}
	out := make([]*mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if qt := q[t.Name]; qt == nil {
			out = append(out, t)
		} else if a := qt.Approved(); a != nil {
			out = append(out, a)
		}
	}
	return out
}

// tool returns the definition of a tool that its pins vouch for: the
// catalog's, or the approved one of a quarantined tool; nil when there is
// none (an unknown tool, or one never approved).
func (st *pinState) tool(name string) *mcp.Tool {
	if st == nil {
		return nil
	}
	for _, t := range st.shown {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// listing returns a server's tools as its listing shows them, and what its
// policy says of them: a quarantined tool with its approved definition,
// marked changed; one that has none by its name alone, marked held. The
// text a server offers in place of what was approved is in neither.
func (e *Engine) listing(ctx context.Context, ent *catalog.Entry) ([]*mcp.Tool, proxy.Policy) {
	st := e.reconcile(ctx, ent)
	pol := proxy.Policy{Warnings: e.approveWarnings(ent.Server, ent)}
	if st.err != nil {
		pol.Warnings = append(pol.Warnings, st.err.Error())
	}
	if len(st.q) == 0 {
		return ent.Tools, pol
	}
	tools := make([]*mcp.Tool, 0, len(ent.Tools))
	for _, t := range ent.Tools {
		q := st.q[t.Name]
		if q == nil {
			tools = append(tools, t)
			continue
		}
		if a := q.Approved(); a != nil {
			tools = append(tools, a)
			if pol.Changed == nil {
				pol.Changed = map[string]bool{}
			}
			pol.Changed[t.Name] = true
			continue
		}
		tools = append(tools, &mcp.Tool{Name: t.Name})
		if pol.Held == nil {
			pol.Held = map[string]string{}
		}
		pol.Held[t.Name] = proxy.NewMark
		if q.Err != nil {
			pol.Held[t.Name] = proxy.UnreadMark
		}
	}
	return tools, pol
}

// view returns a catalog entry with its tools as the agent and a host may
// see them (see pinState.shown): ent itself when nothing is quarantined.
func (e *Engine) view(ctx context.Context, ent *catalog.Entry) *catalog.Entry {
	st := e.reconcile(ctx, ent)
	if len(st.q) == 0 {
		return ent
	}
	cp := *ent
	cp.Tools = st.shown
	return &cp
}

// QuarantinedError is the error of a call of a quarantined tool, which is
// sent nowhere.
type QuarantinedError struct {
	Q *policy.Quarantine
}

func (e *QuarantinedError) Error() string {
	if e.Q.Err != nil {
		return fmt.Sprintf("tool %q on %q is quarantined, so the call was sent nowhere: %v", e.Q.Tool, e.Q.Server, e.Q.Err)
	}
	why := "its definition changed since it was approved"
	if e.Q.New {
		why = "it is new on the server, and settings.pin is \"strict\""
	}
	return fmt.Sprintf("tool %q on %q is quarantined: %s (%s), so the call was sent nowhere; hint: see what changed with describe, then accept it with switchboard approve %s %s",
		e.Q.Tool, e.Q.Server, why, e.Q.Since.UTC().Format(time.RFC3339), e.Q.Server, e.Q.Tool)
}

// quarantineNote is what describe says of a quarantined tool: Switchboard's
// own words, and the definition the server offers, which is untrusted.
func quarantineNote(q *policy.Quarantine) proxy.QuarantineNote {
	n := proxy.QuarantineNote{Offered: q.Diff(60)}
	switch {
	case q.Err != nil:
		n.Notes = []string{"quarantined: " + q.Err.Error()}
	case q.New:
		n.Notes = []string{fmt.Sprintf("new: quarantined since %s, never approved: not callable until accepted (switchboard approve %s %s); what the server offers:",
			q.Since.UTC().Format(time.RFC3339), q.Server, q.Tool)}
	default:
		n.Notes = []string{
			fmt.Sprintf("changed: quarantined since %s: not callable until accepted (switchboard approve %s %s); shown above as it was approved", q.Since.UTC().Format(time.RFC3339), q.Server, q.Tool),
			"what changed since it was approved (- approved, + now):",
		}
	}
	return n
}

// Quarantined returns the quarantined tools of a server, sorted, with what
// changed: the tools whose definition differs from the one accepted. It
// never connects.
func (e *Engine) Quarantined(ctx context.Context, server string) ([]*policy.Quarantine, error) {
	name, err := e.server(server)
	if err != nil {
		return nil, err
	}
	q := e.quarantined(ctx, name)
	out := make([]*policy.Quarantine, 0, len(q))
	for _, k := range sortedKeys(q) {
		out = append(out, q[k])
	}
	return out, nil
}

// ErrNotQuarantined is matched by the error of Approve for a tool that is
// not quarantined.
var ErrNotQuarantined = errors.New("not quarantined")

// Approve accepts the definition of a quarantined tool that the catalog
// holds (the one describe shows), which makes the tool callable again, and
// records it in the audit trail. It connects the server only when the
// catalog does not know it.
func (e *Engine) Approve(ctx context.Context, server, tool string) (*policy.Quarantine, error) {
	name, err := e.server(server)
	if err != nil {
		return nil, err
	}
	// The definition accepted is the one describe shows, from the catalog:
	// should the server offer yet another by now, the next listing
	// quarantines that one in turn.
	def, _ := e.cfg.Server(name)
	if _, ok := e.cached(ctx, def); !ok {
		if _, err := e.entry(ctx, name); err != nil {
			return nil, err
		}
	}
	q := e.quarantined(ctx, name)[tool]
	if q == nil {
		return nil, fmt.Errorf("tool %q on %q: %w: its definition is the one accepted", tool, name, ErrNotQuarantined)
	}
	if q.Err != nil {
		return nil, fmt.Errorf("accepting %q of %q: %w", tool, name, q.Err)
	}
	if _, err := e.pol.pins.Accept(ctx, name, tool, q.Pending); err != nil {
		return nil, err
	}
	e.pol.mu.Lock()
	delete(e.pol.pinStates, name) // reconcile again
	e.pol.mu.Unlock()
	e.record(ctx, nil, policy.Record{Event: policy.EventRelease, Server: name, Tool: tool, Decision: "accepted"})
	return q, nil
}

// unsearchable returns the quarantined tools of servers, by server: search
// leaves them out, since the catalog indexes the text the server offers
// now, not the approved one. Their servers' listings show them.
func (e *Engine) unsearchable(ctx context.Context, servers []string) map[string][]string {
	var out map[string][]string
	for _, name := range servers {
		q := e.quarantined(ctx, name)
		if len(q) == 0 {
			continue
		}
		if out == nil {
			out = map[string][]string{}
		}
		out[name] = sortedKeys(q)
	}
	return out
}

// quarantine returns a tool's quarantine, or nil. st may be nil.
func (st *pinState) quarantine(name string) *policy.Quarantine {
	if st == nil {
		return nil
	}
	return st.q[name]
}

// livePins returns what a pinned server's pins say of the tools its live
// connection offers, connecting it if needed: a call is judged by the
// definitions of the server it goes to, not only by the catalog's, which
// may be of an earlier connection (another process's, or before the
// server changed and restarted). The first call of a connection whose
// tools the catalog does not hold yet lists the server and stores what
// it offers first, as a listing would; later calls cost a look at the
// connection's tools, which the pool keeps. With pin off it is pinned.
func (e *Engine) livePins(ctx context.Context, server string) (*pinState, error) {
	def, ok := e.cfg.Server(server)
	if !ok || e.cfg.PinModeOf(def) == config.PinOff {
		return e.pinned(ctx, server), nil
	}
	if live, ok := e.pool.ListedTools(server); ok {
		if st := e.pinned(ctx, server); st != nil && sameSlice(st.ent.Tools, live) {
			return st, nil // the usual case: a lock and two map lookups
		}
	}
	// The catalog's entry is judged first (its definitions hashed, which
	// is the most of it): for a server that is starting, while it starts,
	// not once it is listed.
	st := e.pinned(ctx, server)
	live, err := e.pool.Tools(ctx, server)
	if err != nil {
		return nil, err
	}
	if st := e.judgedFor(ctx, st, live); st != nil {
		return st, nil
	}
	// The listing may have refreshed the catalog's entry meanwhile.
	if st := e.judgedFor(ctx, e.pinned(ctx, server), live); st != nil {
		return st, nil
	}
	ent, err := e.fetch(ctx, server, false)
	if err != nil {
		return nil, err
	}
	if err := e.put(ctx, ent); err != nil {
		e.log.Warn("writing the catalog", "server", server, "err", err)
	}
	return e.reconcile(ctx, ent), nil
}

// judgedFor returns the pins' judgment of live, a connection's tools,
// when they are the definitions of st's entry; nil when they are not (or
// st is nil). A new connection that offers the very definitions the
// catalog holds, as a new process finds them, needs nothing listed or
// stored, and its definitions were hashed for the entry: only the pins
// are read again. The entry in memory takes the connection's list, so
// that later calls find it at once.
func (e *Engine) judgedFor(ctx context.Context, st *pinState, live []*mcp.Tool) *pinState {
	switch {
	case st == nil:
		return nil
	case sameSlice(st.ent.Tools, live):
		return st
	case !jsonEqual(st.ent.Tools, live):
		return nil
	}
	cp := *st.ent
	cp.Tools = live
	e.memo.put(&cp)
	return e.carry(ctx, st, &cp)
}

// carry judges ent, an entry whose tools are written as st's entry's
// are, by the pins as they are now (another process may have changed
// them since st was judged, however long ago), with st's definitions:
// the same JSON, the same hashes, which need not be computed again.
func (e *Engine) carry(ctx context.Context, st *pinState, ent *catalog.Entry) *pinState {
	if st.defs == nil {
		return e.reconcile(ctx, ent)
	}
	return e.judge(ctx, ent, st.defs)
}

// listedAgain judges ent, the entry old listed again with the same lists,
// by the pins as they are now: with old's definitions when they were
// hashed, as judgedFor does. That holds because lists are not changed in
// place: the pool's are shared and read-only (upstream.Pool.Tools), and
// a changed list is a new one, which is hashed.
func (e *Engine) listedAgain(ctx context.Context, old, ent *catalog.Entry) {
	e.pol.mu.Lock()
	st := e.pol.pinStates[ent.Server]
	e.pol.mu.Unlock()
	if st != nil && st.ent == old {
		e.carry(ctx, st, ent)
		return
	}
	e.reconcile(ctx, ent)
}

// sameSlice reports whether two lists of tools are one: the list of one
// connection, as the pool keeps it.
func sameSlice(a, b []*mcp.Tool) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
