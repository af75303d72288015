package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/catalog"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// pinState is what the engine knows of a server's quarantined tools, for
// one catalog entry of the server.
type pinState struct {
	ent  *catalog.Entry
	q    map[string]*policy.Quarantine
	defs []policy.Def // ent's tools' definitions
}

// quarantined returns a server's quarantined tools, by name: those whose
// definition in the catalog differs from the one the user accepted (see
// policy.Reconcile). It never connects.
func (e *Engine) quarantined(ctx context.Context, server string) map[string]*policy.Quarantine {
	def, ok := e.cfg.Server(server)
	if !ok || e.cfg.PinModeOf(def) == config.PinOff {
		return nil
	}
	ent, ok := e.cached(ctx, def)
	if !ok {
		return nil
	}
	return e.reconcile(ctx, ent)
}

// reconcile compares a catalog entry's tools with their pins, once per
// entry while none is quarantined: it stores new pins and pending
// definitions and records what entered quarantine in the audit trail. A passive engine (status) only
// looks: what it found is recorded by the engine that lists the server.
func (e *Engine) reconcile(ctx context.Context, ent *catalog.Entry) map[string]*policy.Quarantine {
	e.pol.mu.Lock()
	st := e.pol.pins[ent.Server]
	e.pol.mu.Unlock()
	// While a tool is quarantined, the pins are read again each time:
	// another process (switchboard approve) may have accepted it.
	if st != nil && st.ent == ent && len(st.q) == 0 {
		return nil
	}
	def, ok := e.cfg.Server(ent.Server)
	if !ok {
		return nil
	}
	mode := e.cfg.PinModeOf(def)
	var q map[string]*policy.Quarantine
	var defs []policy.Def
	if mode != config.PinOff {
		// The definitions are hashed before any lock is taken, and the
		// pins are read first: the write transaction, which blocks other
		// writers of the catalog, is taken only when there is something to
		// write, and then only compares.
		defs = st.defsFor(ent)
		var r policy.Reconciled
		reconcile := func(stored map[string]catalog.Pin) []catalog.Pin {
			r = policy.Reconcile(ent.Server, stored, defs, mode, time.Now())
			return r.Write
		}
		stored, err := e.cat.Pins(ctx, ent.Server)
		if err == nil {
			reconcile(stored)
			switch {
			case e.opts.Passive:
				// Status only looks: the engine that lists the server records.
				r.Events = nil
			case len(r.Write) > 0:
				err = e.cat.UpdatePins(ctx, ent.Server, reconcile)
			}
		}
		if err != nil {
			e.log.Warn("tool pinning", "server", ent.Server, "err", err)
			return nil
		}
		q = r.Quarantined
		for _, ev := range r.Events {
			e.record(ctx, nil, ev)
			if ev.Event == policy.EventQuarantine {
				e.log.Warn("tool quarantined", "server", ev.Server, "tool", ev.Tool, "why", ev.Why)
			}
		}
	}
	e.pol.mu.Lock()
	if e.pol.pins == nil {
		e.pol.pins = map[string]*pinState{}
	}
	e.pol.pins[ent.Server] = &pinState{ent: ent, q: q, defs: defs}
	e.pol.mu.Unlock()
	return q
}

// defsFor returns the definitions of ent's tools, hashed once per entry.
// st may be nil.
func (st *pinState) defsFor(ent *catalog.Entry) []policy.Def {
	if st != nil && st.ent == ent && st.defs != nil {
		return st.defs
	}
	return policy.Definitions(ent.Tools)
}

// QuarantinedError is the error of a call of a quarantined tool, which is
// sent nowhere.
type QuarantinedError struct {
	Q *policy.Quarantine
}

func (e *QuarantinedError) Error() string {
	why := "its definition changed since it was approved"
	if e.Q.New {
		why = "it is new on the server, and settings.pin is \"strict\""
	}
	return fmt.Sprintf("tool %q on %q is quarantined: %s (%s), so the call was sent nowhere; hint: see what changed with describe, then accept it with switchboard approve %s %s",
		e.Q.Tool, e.Q.Server, why, e.Q.Since.UTC().Format(time.RFC3339), e.Q.Server, e.Q.Tool)
}

// policyView is what a server's policy says of its tools, for its listing.
func (e *Engine) policyView(ctx context.Context, server string, ent *catalog.Entry) proxy.Policy {
	pol := proxy.Policy{Warnings: e.approveWarnings(server, ent)}
	for name, q := range e.quarantined(ctx, server) {
		if pol.Changed == nil {
			pol.Changed = map[string][]string{}
		}
		pol.Changed[name] = quarantineLines(q)
	}
	return pol
}

// quarantineLines show, in describe, that a tool is quarantined and what
// changed.
func quarantineLines(q *policy.Quarantine) []string {
	lines := []string{fmt.Sprintf("changed: quarantined since %s: not callable until accepted (switchboard approve %s %s)", q.Since.UTC().Format(time.RFC3339), q.Server, q.Tool)}
	if !q.New {
		lines = append(lines, "what changed since it was approved (- approved, + now):")
	}
	return append(lines, q.Diff(60)...)
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
	if _, ok := e.Cached(ctx, name); !ok {
		if _, err := e.entry(ctx, name); err != nil {
			return nil, err
		}
	}
	q := e.quarantined(ctx, name)[tool]
	if q == nil {
		return nil, fmt.Errorf("tool %q on %q: %w: its definition is the one accepted", tool, name, ErrNotQuarantined)
	}
	if _, err := e.cat.Accept(ctx, name, tool, q.Pending); err != nil {
		return nil, err
	}
	e.pol.mu.Lock()
	delete(e.pol.pins, name) // reconcile again
	e.pol.mu.Unlock()
	e.record(ctx, nil, policy.Record{Event: policy.EventRelease, Server: name, Tool: tool, Decision: "accepted"})
	return q, nil
}
