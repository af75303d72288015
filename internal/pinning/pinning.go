// Package pinning pins tool definitions and compares what a server offers
// with its pins: the mechanics behind policy.Quarantine. The first
// definition seen of each tool is pinned (a catalog.Pin); a later,
// different one is quarantined (not callable) until the user accepts it,
// which guards against a server that changes what a tool says or does
// after the user started to rely on it (a "rug pull"). The engine
// (internal/gateway) stores the pins and asks here; a host only sees the
// quarantines (docs/policy.md).
package pinning

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/policy"
)

// DefinitionVersion is the version of the hashes Definition returns. A
// hash of version 2 or later starts with its version and a colon ("2:…");
// one without is of version 1, which covered fewer fields (see Reconcile).
const DefinitionVersion = 2

// Definition returns the hash and canonical JSON of what an agent or a
// host sees of a tool: every field go-sdk's mcp.Tool carries, which is
// what the tool's listing held and what direct tools forward (name, title,
// description, input and output schemas, annotations, _meta, icons, and
// any field a later go-sdk adds). Key order and formatting do not change
// them.
func Definition(t *mcp.Tool) (hash, canon string) {
	raw, err := json.Marshal(t)
	if err != nil {
		raw = canonical(fmt.Appendf(nil, "%q", err.Error()))
	} else {
		raw = canonicalValid(raw)
	}
	sum := sha256.Sum256(raw)
	return fmt.Sprintf("%d:%s", DefinitionVersion, hex.EncodeToString(sum[:16])), string(raw)
}

// definitionV1 is Definition as version 1 had it: name, title,
// description, schemas and annotations, without _meta and icons. Pins
// stored with it are upgraded (see Reconcile).
func definitionV1(t *mcp.Tool) (hash, canon string) {
	raw, err := json.Marshal(struct {
		Name         string               `json:"name"`
		Title        string               `json:"title,omitempty"`
		Description  string               `json:"description,omitempty"`
		InputSchema  any                  `json:"inputSchema,omitempty"`
		OutputSchema any                  `json:"outputSchema,omitempty"`
		Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
	}{t.Name, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations})
	if err != nil {
		raw = canonical(fmt.Appendf(nil, "%q", err.Error()))
	} else {
		raw = canonicalValid(raw)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16]), string(raw)
}

// Def is a tool's definition as pinning compares it (see Definition).
type Def struct {
	Tool, Hash, Canon string

	t *mcp.Tool // for the hash of an older version, when a pin has one
}

// Definitions returns the definitions of tools, skipping nil ones. It is
// the costly part of pinning (each schema is encoded twice and hashed), so
// a caller does it before taking any lock.
func Definitions(tools []*mcp.Tool) []Def {
	out := make([]Def, 0, len(tools))
	for _, t := range tools {
		if t == nil {
			continue
		}
		h, canon := Definition(t)
		out = append(out, Def{Tool: t.Name, Hash: h, Canon: canon, t: t})
	}
	return out
}

// matchesOld reports whether a pin of an older hash version pinned the
// definition d, as that version saw it.
func (d Def) matchesOld(p catalog.Pin) bool {
	if d.t == nil || p.Hash == "" || strings.Contains(p.Hash, ":") {
		return false
	}
	h, _ := definitionV1(d.t)
	return h == p.Hash
}

// Unreadable returns the quarantine of every tool of defs when a server's
// pins could not be read or written (err): fail closed.
func Unreadable(server string, defs []Def, err error) map[string]*policy.Quarantine {
	if len(defs) == 0 {
		return nil
	}
	out := make(map[string]*policy.Quarantine, len(defs))
	for _, d := range defs {
		out[d.Tool] = &policy.Quarantine{Server: server, Tool: d.Tool, Current: d.Canon, Pending: d.Hash, Err: err}
	}
	return out
}

// Reconciled is the outcome of comparing a server's tools with its pins.
type Reconciled struct {
	Write       []catalog.Pin                 // pins to store
	Quarantined map[string]*policy.Quarantine // by tool name; nil for none
	Events      []policy.Record               // for the audit trail, bounded
}

// maxPinEvents bounds the audit records of one reconciliation: a server
// that offers thousands of new tools at once gets a summary.
const maxPinEvents = 20

// Reconcile compares the tools a server offers with their pins (stored, by
// tool name) under mode. The first listing of a server pins every tool,
// and is recorded even when it has none (the pin named
// catalog.FirstListing): a server that listed nothing once has been seen,
// and under PinStrict a tool it offers later is new. Afterwards a tool
// whose definition differs from its pin is quarantined, and recorded once
// when it enters quarantine, however often it changes while there: a
// server that floods changes costs one record. A new tool is pinned and
// reported, or under PinStrict quarantined.
//
// A pin whose hash is of an older version (see DefinitionVersion) and
// still matches the tool as that version hashed it is pinned again, with
// no record, under the current version: what it covered is unchanged, and
// what it did not cover (_meta, icons) is taken as first seen.
func Reconcile(server string, stored map[string]catalog.Pin, defs []Def, mode config.PinMode, now time.Time) Reconciled {
	var r Reconciled
	if mode == config.PinOff {
		return r
	}
	first := len(stored) == 0
	if _, ok := stored[catalog.FirstListing]; !ok {
		r.Write = append(r.Write, catalog.Pin{Server: server, Tool: catalog.FirstListing, FirstSeen: now})
	}
	more := 0
	event := func(ev, tool, why string) {
		if len(r.Events) < maxPinEvents {
			r.Events = append(r.Events, policy.Record{Time: now, Event: ev, Server: server, Tool: tool, Why: why})
		} else {
			more++
		}
	}
	for _, t := range defs {
		h, canon := t.Hash, t.Canon
		p, ok := stored[t.Tool]
		switch {
		case t.Tool == catalog.FirstListing:
			continue // never listed: upstream drops tools without a name
		case !ok && (first || mode != config.PinStrict):
			r.Write = append(r.Write, catalog.Pin{Server: server, Tool: t.Tool, Hash: h, Def: canon, FirstSeen: now})
			if !first {
				event(policy.EventNewTool, t.Tool, "a tool new on this server; pinned as first seen")
			}
			continue
		case !ok:
			p = catalog.Pin{Server: server, Tool: t.Tool, FirstSeen: now}
		case p.Hash == h:
			if p.Pending != "" { // the server went back to the accepted definition
				p.Pending, p.PendingDef, p.PendingAt = "", "", time.Time{}
				r.Write = append(r.Write, p)
			}
			continue
		case t.matchesOld(p):
			p.Hash, p.Def = h, canon
			p.Pending, p.PendingDef, p.PendingAt = "", "", time.Time{}
			r.Write = append(r.Write, p)
			continue
		}
		if p.Pending == "" {
			p.PendingAt = now
			why := "its definition changed since it was approved"
			if p.Hash == "" {
				why = "a tool new on this server, under pin \"strict\""
			}
			event(policy.EventQuarantine, t.Tool, why)
		}
		if p.Pending != h {
			p.Pending, p.PendingDef = h, canon
			r.Write = append(r.Write, p)
		}
		if r.Quarantined == nil {
			r.Quarantined = map[string]*policy.Quarantine{}
		}
		r.Quarantined[t.Tool] = &policy.Quarantine{Server: server, Tool: t.Tool, New: p.Hash == "", Since: p.PendingAt, Old: p.Def, Current: canon, Pending: h}
	}
	if more > 0 {
		r.Events = append(r.Events, policy.Record{Time: now, Event: policy.EventQuarantine, Server: server,
			Why: fmt.Sprintf("and %d more tools new or changed in the same listing (not recorded one by one)", more)})
	}
	return r
}
