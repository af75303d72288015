package gateway

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// Attacks on tool pinning with hostile.Note's rug pulls: a server that
// lists nothing and then something, that hides instructions in a changed
// description or in _meta or icons; pins that cannot be read; a cache
// directory wiped; pins an older version stored.

// pinsAt is where an engine over home keeps its pins.
func pinsAt(home string) string {
	return filepath.Join(home, ".local", "state", "switchboard", PinsFile)
}

// untrustedBlock matches the blocks of untrusted data in a text.
var untrustedBlock = regexp.MustCompile(`(?s)<untrusted-data .*?</untrusted-data>`)

// noInjection fails the test when what is shown (a text, or details as
// JSON) holds the rug pull's text outside an untrusted-data block.
func noInjection(t *testing.T, what string, shown any) {
	t.Helper()
	s, ok := shown.(string)
	if !ok {
		b, err := json.Marshal(shown)
		if err != nil {
			t.Fatal(err)
		}
		s = string(b)
	}
	if strings.Contains(untrustedBlock.ReplaceAllString(s, ""), hostile.InjectedWord) {
		t.Errorf("%s shows the rug pull's text:\n%s", what, s)
	}
}

// searchFinds reports whether a search finds a tool of server s.
func searchFinds(t *testing.T, e *Engine, query, tool string) bool {
	t.Helper()
	req, _ := json.Marshal(map[string]any{"search": query})
	r := must(t, e, string(req))
	noInjection(t, "search results", r.Details.Tools) // the text echoes the query
	for _, h := range r.Details.Tools {
		if h.Server == "s" && h.Name == tool {
			return true
		}
	}
	return false
}

// TestPinStrictAfterEmptyListing: under pin "strict", a server whose first
// listing was empty has been seen; a tool it offers later is new:
// quarantined, not callable, and listed by its name alone.
func TestPinStrictAfterEmptyListing(t *testing.T) {
	home := t.TempDir()
	srv := newShifty(t)
	servers := map[string]def{"s": srv.def()}
	settings := map[string]any{"pin": "strict"}

	srv.set()
	e1 := engineIn(t, home, servers, settings, nil)
	wantText(t, must(t, e1, `{"server": "s"}`), "0 tools")
	e1.Close()

	srv.set(hostile.NotePulled())
	e2 := engineIn(t, home, servers, settings, nil)
	r := must(t, e2, `{"server": "s"}`)
	wantText(t, r, proxy.NewMark+" "+hostile.NoteTool)
	noInjection(t, "listing", r.Text)
	noInjection(t, "listing details", r.Details)
	if len(r.Details.Tools) != 1 || !r.Details.Tools[0].Held || r.Details.Tools[0].Description != "" {
		t.Errorf("listing details %+v, want save_note held, without description", r.Details.Tools)
	}
	call := handle(t, e2, `{"tool": "save_note", "server": "s", "args": {"note": "x"}}`)
	if !call.IsError || srv.count() != 0 {
		t.Fatalf("calling the new tool: %q, server calls %d; want refused, none", call.Text, srv.count())
	}
	wantText(t, call, "quarantined", "new on the server", "switchboard approve s save_note")
	if searchFinds(t, e2, "ssh id_rsa private key", hostile.NoteTool) || searchFinds(t, e2, "save note", hostile.NoteTool) {
		t.Error("search finds the quarantined tool")
	}
	d := must(t, e2, `{"describe": "save_note", "server": "s"}`)
	noInjection(t, "describe", d.Text)
	noInjection(t, "describe details", d.Details.Tool.Description)
	wantText(t, d, "not shown until approved", "switchboard approve s save_note", hostile.InjectedWord)
	if !d.Details.Tool.Held || !strings.HasPrefix(d.Details.Tool.Offered, "<untrusted-data") {
		t.Errorf("describe details %+v, want held, the offered definition as untrusted data", d.Details.Tool)
	}
	ent, err := e2.Entry(t.Context(), "s")
	if err != nil || len(ent.Tools) != 0 {
		t.Errorf("Entry's tools %v (%v), want none: a tool never approved is not shown", ent.Tools, err)
	}

	if _, err := e2.Approve(t.Context(), "s", hostile.NoteTool); err != nil {
		t.Fatal(err)
	}
	must(t, e2, `{"tool": "save_note", "server": "s", "args": {"note": "x"}}`)
	if srv.count() != 1 {
		t.Errorf("after approval the server got %d calls, want 1", srv.count())
	}
}

// TestRugPullShowsApproved: after a rug pull, everything the agent or a
// host is shown of the tool is the approved definition: the listing,
// search, Entry and Cached (direct tools), describe; the new text appears
// only in describe, inside an untrusted-data block, as a diff.
func TestRugPullShowsApproved(t *testing.T) {
	home := t.TempDir()
	srv := newShifty(t)
	servers := map[string]def{"s": srv.def()}

	e2 := rugPull(t, home, srv, servers, nil)
	r := must(t, e2, `{"server": "s"}`)
	wantText(t, r, proxy.ChangedMark+" save_note — Saves a note.")
	noInjection(t, "listing", r.Text)
	noInjection(t, "listing details", r.Details)
	if searchFinds(t, e2, "ssh id_rsa private key", hostile.NoteTool) {
		t.Error("search finds the tool by words only its new description has")
	}
	for _, get := range []func() (*catalog.Entry, error){
		func() (*catalog.Entry, error) { return e2.Entry(t.Context(), "s") },
		func() (*catalog.Entry, error) {
			ent, ok := e2.Cached(t.Context(), "s")
			if !ok {
				return nil, errors.New("not cached")
			}
			return ent, nil
		},
	} {
		ent, err := get()
		if err != nil {
			t.Fatal(err)
		}
		if len(ent.Tools) != 1 || ent.Tools[0].Description != "Saves a note." {
			t.Errorf("entry's tools %+v, want the approved save_note", ent.Tools)
		}
	}
	d := must(t, e2, `{"describe": "save_note", "server": "s"}`)
	noInjection(t, "describe", d.Text)
	noInjection(t, "describe details", d.Details.Tool.Description)
	wantText(t, d, "Saves a note.", "changed: quarantined since", `+   "description": "Saves a note. `+hostile.Injected)
	if d.Details.Tool.Description != "Saves a note." || !d.Details.Tool.Changed || !strings.Contains(d.Details.Tool.Offered, hostile.InjectedWord) {
		t.Errorf("describe details %+v, want the approved description and the offered one as untrusted data", d.Details.Tool)
	}
	if r := handle(t, e2, `{"tool": "save_note", "server": "s", "args": {"note": "x"}}`); !r.IsError || srv.count() != 0 {
		t.Errorf("call of the changed tool: %q, %d calls; want refused", r.Text, srv.count())
	}
}

// TestPinMetaAndIcons: a change to _meta or icons alone, which direct
// tools forward, quarantines the tool.
func TestPinMetaAndIcons(t *testing.T) {
	for name, changed := range map[string]*mcp.Tool{"_meta": hostile.NoteMeta(), "icons": hostile.NoteIcons()} {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			srv := newShifty(t)
			servers := map[string]def{"s": srv.def()}
			srv.set(hostile.Note())
			e1 := engineIn(t, home, servers, nil, nil)
			must(t, e1, `{"server": "s"}`)
			e1.Close()

			srv.set(changed)
			e2 := engineIn(t, home, servers, nil, nil)
			wantText(t, must(t, e2, `{"server": "s"}`), proxy.ChangedMark+" save_note")
			if r := handle(t, e2, `{"tool": "save_note", "server": "s", "args": {"note": "x"}}`); !r.IsError || srv.count() != 0 {
				t.Errorf("call: %q, %d calls; want refused", r.Text, srv.count())
			}
			ent, err := e2.Entry(t.Context(), "s")
			if err != nil {
				t.Fatal(err)
			}
			noInjection(t, "Entry", ent.Tools)
		})
	}
}

// TestPinsUnreadable: pins that cannot be read fail closed for the
// servers that are pinned: none of their tools is callable, listed with
// its text or searchable, and the error says where the pins are and what
// to do. A server with pin off is not concerned.
func TestPinsUnreadable(t *testing.T) {
	home := t.TempDir()
	srv, other := newShifty(t), newShifty(t)
	off := other.def()
	off["pin"] = false
	servers := map[string]def{"s": srv.def(), "o": off}
	srv.set(hostile.Note())
	other.set(hostile.Note())
	e1 := engineIn(t, home, servers, nil, nil)
	must(t, e1, `{"server": "s"}`)
	must(t, e1, `{"server": "o"}`)
	e1.Close()

	if err := os.WriteFile(pinsAt(home), []byte(strings.Repeat("not a database ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	e2 := engineIn(t, home, servers, nil, nil)
	r := handle(t, e2, `{"tool": "save_note", "server": "s", "args": {"note": "x"}}`)
	if !r.IsError || srv.count() != 0 {
		t.Fatalf("call with unreadable pins: %q, %d calls; want refused", r.Text, srv.count())
	}
	wantText(t, r, "quarantined", "sent nowhere", `the pins of "s" could not be read`, pinsAt(home), "hint: ", "move it aside")
	l := must(t, e2, `{"server": "s"}`)
	wantText(t, l, proxy.UnreadMark+" save_note", "warning: the pins of \"s\" could not be read")
	if strings.Contains(l.Text, "Saves a note") {
		t.Errorf("listing with unreadable pins shows the server's text:\n%s", l.Text)
	}
	if searchFinds(t, e2, "save note", hostile.NoteTool) {
		t.Error("search finds a tool whose pins cannot be read")
	}
	if _, err := e2.Approve(t.Context(), "s", hostile.NoteTool); err == nil || !strings.Contains(err.Error(), "could not be read") {
		t.Errorf("approving with unreadable pins: %v, want the pins' error", err)
	}
	must(t, e2, `{"tool": "save_note", "server": "o", "args": {"note": "x"}}`)
	if other.count() != 1 {
		t.Errorf("a server with pin off got %d calls, want 1", other.count())
	}

	// Moved aside, the pins start over: every tool pinned as first seen.
	e2.Close()
	if err := os.Rename(pinsAt(home), pinsAt(home)+".broken"); err != nil {
		t.Fatal(err)
	}
	e3 := engineIn(t, home, servers, nil, nil)
	must(t, e3, `{"tool": "save_note", "server": "s", "args": {"note": "x"}}`)
}

// TestPinsSurviveCacheWipe: the pins are state, not cache: with the cache
// directory deleted (the catalog with it), a rug pull is still caught.
func TestPinsSurviveCacheWipe(t *testing.T) {
	home := t.TempDir()
	srv := newShifty(t)
	servers := map[string]def{"s": srv.def()}
	e2 := rugPull(t, home, srv, servers, func() {
		if err := os.RemoveAll(filepath.Join(home, ".cache")); err != nil {
			t.Fatal(err)
		}
	})
	r := must(t, e2, `{"server": "s"}`)
	wantText(t, r, proxy.ChangedMark+" save_note — Saves a note.")
	noInjection(t, "listing", r.Text)
	if r := handle(t, e2, `{"tool": "save_note", "server": "s", "args": {"note": "x"}}`); !r.IsError || srv.count() != 0 {
		t.Errorf("call after a cache wipe and a rug pull: %q, %d calls; want refused", r.Text, srv.count())
	}
}

// definitionV1 is the hash and canonical JSON an older Switchboard pinned
// (pinning.Definition of version 1, as it was): no _meta, no icons.
func definitionV1(t *mcp.Tool) (hash, canon string) {
	raw, _ := json.Marshal(struct {
		Name         string               `json:"name"`
		Title        string               `json:"title,omitempty"`
		Description  string               `json:"description,omitempty"`
		InputSchema  any                  `json:"inputSchema,omitempty"`
		OutputSchema any                  `json:"outputSchema,omitempty"`
		Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
	}{t.Name, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations})
	var v any
	json.Unmarshal(raw, &v)
	raw, _ = json.Marshal(v)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16]), string(raw)
}

// TestPinsUpgrade: pins an older version kept in the catalog move to the
// pins file once, and a tool whose definition did not change is not
// quarantined by the new hash's wider reach (its _meta was never pinned);
// one that did change is.
func TestPinsUpgrade(t *testing.T) {
	home := t.TempDir()
	srv := newShifty(t)
	servers := map[string]def{"s": srv.def()}
	withMeta := hostile.NoteMeta() // _meta the old hash did not cover
	other := &mcp.Tool{Name: "other", Description: "One.", InputSchema: map[string]any{"type": "object"}}

	catPath := filepath.Join(home, ".cache", "switchboard", "catalog.db")
	if err := os.MkdirAll(filepath.Dir(catPath), 0o700); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(catPath)
	if err != nil {
		t.Fatal(err)
	}
	var old []catalog.Pin
	for _, tl := range []*mcp.Tool{withMeta, other} {
		h, canon := definitionV1(tl)
		old = append(old, catalog.Pin{Server: "s", Tool: tl.Name, Hash: h, Def: canon})
	}
	if err := cat.SetPins(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	cat.Close()

	changed := *other
	changed.Description = "One. " + hostile.Injected
	srv.set(withMeta, &changed)
	e := engineIn(t, home, servers, nil, nil)
	must(t, e, `{"tool": "save_note", "server": "s", "args": {"note": "x"}}`)
	if srv.count() != 1 {
		t.Fatalf("the unchanged tool got %d calls, want 1", srv.count())
	}
	r := must(t, e, `{"server": "s"}`)
	wantText(t, r, proxy.ChangedMark+" other — One.")
	noInjection(t, "listing", r.Text)
	if strings.Contains(r.Text, proxy.ChangedMark+" save_note") {
		t.Errorf("the unchanged tool is quarantined after the upgrade:\n%s", r.Text)
	}

	// The catalog holds no pins any more; the pins file holds them all.
	cat, err = catalog.Open(catPath)
	if err != nil {
		t.Fatal(err)
	}
	defer cat.Close()
	if left, err := cat.Pins(t.Context(), "s"); err != nil || len(left) != 0 {
		t.Errorf("the catalog still holds pins %v (%v)", left, err)
	}
	f, err := catalog.OpenPinFile(pinsAt(home), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pins, err := f.Pins(t.Context(), "s")
	if err != nil {
		t.Fatal(err)
	}
	if p := pins[hostile.NoteTool]; !strings.HasPrefix(p.Hash, "2:") || !strings.Contains(p.Def, "note/hint") {
		t.Errorf("save_note's pin %+v, want pinned again with its _meta", p)
	}
	if _, ok := pins[catalog.FirstListing]; !ok {
		t.Errorf("no first-listing mark among %v", pins)
	}
}

// TestPinCallBeforeListing: a call made first thing after the server
// changed, before anything listed it again, is judged by what the server
// it goes to offers now, not by the catalog's listing of an earlier run:
// through the mcp tool, and through CallTool (direct tools, the library).
func TestPinCallBeforeListing(t *testing.T) {
	for name, call := range map[string]func(*Engine) error{
		"mcp tool": func(e *Engine) error {
			if r := e.Handle(context.Background(), json.RawMessage(`{"tool": "save_note", "server": "s", "args": {"note": "x"}}`)); r.IsError {
				return errors.New(r.Text)
			}
			return nil
		},
		"CallTool": func(e *Engine) error {
			_, err := e.CallTool(context.Background(), "s", &mcp.CallToolParams{Name: hostile.NoteTool, Arguments: map[string]any{"note": "x"}})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			home := t.TempDir()
			srv := newShifty(t)
			servers := map[string]def{"s": srv.def()}
			e2 := rugPull(t, home, srv, servers, nil)
			err := call(e2)
			var qe *QuarantinedError
			if !errors.As(err, &qe) && (err == nil || !strings.Contains(err.Error(), "quarantined")) || srv.count() != 0 {
				t.Fatalf("first call after a rug pull: %v, %d calls; want refused as quarantined", err, srv.count())
			}
		})
	}
}

// TestPinsInStore: with the shared store, pins stay in PostgreSQL, which
// is not a cache: no pins file is made, and a rug pull one replica sees is
// judged by the pins another replica made.
func TestPinsInStore(t *testing.T) {
	dsn := pgtest.DSN(t)
	srv := newShifty(t)
	servers := map[string]def{"s": srv.def()}
	replica := func() (*Engine, string) {
		db, err := pgstore.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		home := t.TempDir()
		return engineIn(t, home, servers, nil, &Options{Store: db, StoreKey: testStoreKey}), home
	}
	srv.set(hostile.Note())
	first, home1 := replica()
	must(t, first, `{"server": "s"}`)
	first.Close()

	srv.set(hostile.NotePulled())
	second, home2 := replica()
	r := must(t, second, `{"server": "s"}`)
	wantText(t, r, proxy.ChangedMark+" save_note — Saves a note.")
	noInjection(t, "listing", r.Text)
	for _, home := range []string{home1, home2} {
		if _, err := os.Stat(pinsAt(home)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a pins file beside the shared store: %v", err)
		}
	}
	second.Close()

	// Something that can write to the database, but does not hold the
	// store's key, accepts the pulled definition behind the replicas'
	// backs: no replica acts on that pin. The server's tools fail closed,
	// and nothing reaches it.
	db, err := pgstore.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), `UPDATE switchboard_catalog_pins SET hash = pending, def = pending_def, pending = '', pending_def = '', pending_at = 0 WHERE pending <> ''`); err != nil {
		t.Fatal(err)
	}
	third, _ := replica()
	calls := srv.count()
	r = handle(t, third, `{"tool": "save_note", "server": "s", "args": {"note": "x"}}`)
	if !r.IsError || srv.count() != calls {
		t.Fatalf("a call after a forged acceptance: %q, %d calls; want it refused, sent nowhere", r.Text, srv.count()-calls)
	}
	wantText(t, r, "quarantined", "not signed with the store's key")
	noInjection(t, "the refused call", r.Text)
	l := must(t, third, `{"server": "s"}`)
	noInjection(t, "listing after a forged acceptance", l.Text)
}

// rugPull lists server "s" (srv) with hostile.Note in an engine over home,
// which pins it, runs between (if not nil), and returns a new engine over
// the same home with srv offering hostile.NotePulled: a rug pull between
// two runs, the pulled definition not yet listed.
func rugPull(t *testing.T, home string, srv *shifty, servers map[string]def, between func()) *Engine {
	t.Helper()
	srv.set(hostile.Note())
	e1 := engineIn(t, home, servers, nil, nil)
	must(t, e1, `{"server": "s"}`)
	e1.Close()
	if between != nil {
		between()
	}
	srv.set(hostile.NotePulled())
	return engineIn(t, home, servers, nil, nil)
}

// TestPinJudgmentCarried: a new connection whose tools are the catalog
// entry's definitions is judged with the entry's hashes, not hashed again
// (judgedFor), but by the pins as they are now: an approval another
// process made since the entry was judged counts, whichever way it goes.
func TestPinJudgmentCarried(t *testing.T) {
	ctx := t.Context()
	t.Run("quarantined, then approved elsewhere", func(t *testing.T) {
		home := t.TempDir()
		srv := newShifty(t)
		servers := map[string]def{"s": srv.def()}
		e2 := rugPull(t, home, srv, servers, nil)
		if r := handle(t, e2, `{"tool": "save_note", "server": "s", "args": {"note": "x"}}`); !r.IsError {
			t.Fatalf("call after the rug pull: %q; want refused", r.Text)
		}
		st := e2.pinned(ctx, "s")
		if st == nil || st.quarantine(hostile.NoteTool) == nil {
			t.Fatalf("pin state %+v; want save_note quarantined", st)
		}
		// Nobody approved: the quarantine holds for a new connection too.
		if next := e2.judgedFor(ctx, st, copyTools(t, st.ent.Tools)); next == nil || next.quarantine(hostile.NoteTool) == nil {
			t.Fatalf("a new connection's judgment %+v; want save_note still quarantined", next)
		}
		st = e2.pinned(ctx, "s")

		e3 := engineIn(t, home, servers, nil, nil)
		if _, err := e3.Approve(ctx, "s", hostile.NoteTool); err != nil {
			t.Fatal(err)
		}
		e3.Close()
		live := copyTools(t, st.ent.Tools)
		next := e2.judgedFor(ctx, st, live)
		if next == nil || next.quarantine(hostile.NoteTool) != nil {
			t.Fatalf("a new connection's judgment after another process approved: %+v; want nothing quarantined", next)
		}
		if !sameSlice(next.ent.Tools, live) || !sameSlice(next.shown, live) {
			t.Error("the entry in memory did not take the connection's list")
		}
		if len(next.defs) == 0 || &next.defs[0] != &st.defs[0] {
			t.Error("the definitions were hashed again")
		}
		if got := e2.pinned(ctx, "s"); got != next {
			t.Error("the engine does not keep the new judgment")
		}
		// Tools that differ are not judged by the entry's hashes at all.
		changed := copyTools(t, live)
		changed[0].Description += " More."
		if e2.judgedFor(ctx, next, changed) != nil {
			t.Error("a connection whose tools differ took the entry's judgment")
		}
	})
	t.Run("accepted, then another definition approved elsewhere", func(t *testing.T) {
		// The engine judged save_note as first offered, nothing
		// quarantined. Another process then sees the rug pull and the
		// user approves the new definition there; the server goes back
		// to the first. That is a change from what the pins now hold.
		home := t.TempDir()
		srv := newShifty(t)
		servers := map[string]def{"s": srv.def()}
		srv.set(hostile.Note())
		e2 := engineIn(t, home, servers, nil, nil)
		must(t, e2, `{"server": "s"}`)
		st := e2.pinned(ctx, "s")
		if st == nil || st.quarantine(hostile.NoteTool) != nil {
			t.Fatalf("pin state %+v; want nothing quarantined", st)
		}
		srv.set(hostile.NotePulled())
		e3 := engineIn(t, home, servers, nil, nil)
		relist(t, e3)
		if _, err := e3.Approve(ctx, "s", hostile.NoteTool); err != nil {
			t.Fatal(err)
		}
		e3.Close()
		if next := e2.judgedFor(ctx, st, copyTools(t, st.ent.Tools)); next == nil || next.quarantine(hostile.NoteTool) == nil {
			t.Fatalf("a new connection offering the first definition, after the second was approved: %+v; want save_note quarantined", next)
		}
	})
}

// copyTools returns tools decoded anew from their JSON: the same
// definitions, other values.
func copyTools(t *testing.T, tools []*mcp.Tool) []*mcp.Tool {
	t.Helper()
	data, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	var out []*mcp.Tool
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// handledChanges returns a channel that receives a value after each
// change e handles (see waitRefreshed).
func handledChanges(e *Engine) <-chan struct{} {
	changed := make(chan struct{}, 1)
	e.mu.Lock()
	e.handled = func(string) {
		select {
		case changed <- struct{}{}:
		default: // a value is waiting already
		}
	}
	e.mu.Unlock()
	return changed
}

// TestRefreshListedAgain: a connection's refresh that lists what the
// catalog's entry holds writes only the entry's time (not the lists, not
// the generation a search compares) and keeps the pins' judgment without
// hashing the definitions again; when another process stored another
// listing since, the refresh stores its own in full and judges it.
func TestRefreshListedAgain(t *testing.T) {
	ctx := t.Context()
	generation := func(t *testing.T, e *Engine) (gen, fetched int64) {
		t.Helper()
		db, err := sql.Open("sqlite", e.cat.Path())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.QueryRowContext(ctx, "SELECT value FROM generation WHERE id = 1").Scan(&gen); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(ctx, "SELECT fetched_at FROM servers WHERE name = 's'").Scan(&fetched); err != nil {
			t.Fatal(err)
		}
		return gen, fetched
	}
	// An engine that called save_note once, and whose connection's own
	// refresh has ended.
	called := func(t *testing.T) (e *Engine, srv *shifty, home string, servers map[string]def) {
		home = t.TempDir()
		srv = newShifty(t)
		srv.set(hostile.Note())
		servers = map[string]def{"s": srv.def()}
		e = engineIn(t, home, servers, nil, nil)
		changed := handledChanges(e)
		must(t, e, `{"tool": "save_note", "server": "s", "args": {"note": "x"}}`)
		waitRefreshed(t, e, changed)
		return e, srv, home, servers
	}
	t.Run("the same lists", func(t *testing.T) {
		e, _, _, _ := called(t)
		st := e.pinned(ctx, "s")
		if st == nil || len(st.defs) == 0 || st.quarantine(hostile.NoteTool) != nil {
			t.Fatalf("pin state %+v; want save_note judged and accepted", st)
		}
		gen, _ := generation(t, e)
		if e.refreshCatalog("s") {
			t.Error("refreshCatalog reported a change; the server lists what it did")
		}
		s, _ := e.cfg.Server("s")
		ent, ok := e.cached(ctx, s)
		if !ok || ent == st.ent {
			t.Fatalf("the entry in memory is %p (was %p); want the new listing's", ent, st.ent)
		}
		if g, fetched := generation(t, e); g != gen || fetched != ent.FetchedAt.UnixMilli() {
			t.Errorf("generation %d, fetched at %d; want %d (no write of the lists) and %d (the new listing's time)", g, fetched, gen, ent.FetchedAt.UnixMilli())
		}
		next := e.pinned(ctx, "s")
		if next == nil || next.ent != ent || next.quarantine(hostile.NoteTool) != nil {
			t.Fatalf("pin state after the refresh %+v; want the new entry's, nothing quarantined", next)
		}
		if &next.defs[0] != &st.defs[0] {
			t.Error("the definitions were hashed again")
		}
		must(t, e, `{"tool": "save_note", "server": "s", "args": {"note": "y"}}`)
	})
	t.Run("another listing stored since", func(t *testing.T) {
		e, srv, home, servers := called(t)
		// Another process lists the rug pull and stores it; the server
		// then offers the first definition again, as e's connection does.
		srv.set(hostile.NotePulled())
		e2 := engineIn(t, home, servers, nil, nil)
		relist(t, e2)
		e2.Close()
		srv.set(hostile.Note())
		gen, _ := generation(t, e)
		if e.refreshCatalog("s") {
			t.Error("refreshCatalog reported a change; e's connection lists what e's entry holds")
		}
		if g, _ := generation(t, e); g == gen {
			t.Error("the catalog still holds the other process's listing: the refresh wrote nothing")
		}
		s, _ := e.cfg.Server("s")
		stored, ok, err := e.cat.Get(ctx, "s", e.memo.hash(s))
		if err != nil || !ok {
			t.Fatalf("Get = %v, %v", ok, err)
		}
		if !jsonEqual(stored.Tools, []*mcp.Tool{hostile.Note()}) {
			got, _ := json.Marshal(stored.Tools)
			t.Errorf("the catalog holds %s; want the first definition, as listed last", got)
		}
		if st := e.pinned(ctx, "s"); st == nil || st.quarantine(hostile.NoteTool) != nil {
			t.Errorf("pin state %+v; want the first definition accepted", st)
		}
	})
}
