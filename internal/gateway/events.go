package gateway

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"slices"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// EventKind is what an Event tells of.
type EventKind int

const (
	// EventState: a server's state changed (connected, failed, needs-auth,
	// …, or its last error).
	EventState EventKind = iota + 1
	// EventLists: what a server offers changed: its tools, resources,
	// resource templates or prompts, as the catalog now has them.
	EventLists
)

// Event is one change of a server, with its status after the change.
type Event struct {
	Kind   EventKind
	Server string
	Status proxy.ServerStatus
}

// Subscribe calls f with every change of a server's state or lists, until
// the returned function is called. f runs on a goroutine of the engine's,
// with a context the engine cancels when it closes; it must not block for
// long, and must not connect a server (use what the catalog has). Events of
// one server come in order; those of different servers may come
// concurrently.
func (e *Engine) Subscribe(f func(context.Context, Event)) (cancel func()) {
	e.mu.Lock()
	id := e.nextSub
	e.nextSub++
	e.subs[id] = f
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		delete(e.subs, id)
		e.mu.Unlock()
	}
}

// onChange is the pool's callback: it records failures, tells subscribers
// and refreshes the catalog of a connected server whose lists may have
// changed. Changes that come while a server's are being handled are
// handled once more after, so the last one is never lost.
func (e *Engine) onChange(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, running := e.refresh[name]; running {
		e.refresh[name] = true // again when done
		return
	}
	e.refresh[name] = false
	if !e.bg.Go(func() {
		for e.handleChange(name) {
		}
	}) {
		delete(e.refresh, name) // closed
	}
}

// handleChange handles a change of a server's state or lists, and reports
// whether another came meanwhile.
func (e *Engine) handleChange(name string) (again bool) {
	lists := e.refreshCatalog(name)
	e.recordFailures(e.ctx, name)
	e.publish(name, lists)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.handled != nil {
		defer e.handled(name)
	}
	if again = e.refresh[name] && e.ctx.Err() == nil; again {
		e.refresh[name] = false
	} else {
		delete(e.refresh, name)
	}
	return again
}

// publish tells subscribers of a server's change: of its state if that is
// not what they were last told, and of its lists if they changed.
func (e *Engine) publish(name string, lists bool) {
	e.mu.Lock()
	subs := make([]func(context.Context, Event), 0, len(e.subs))
	for _, f := range e.subs {
		subs = append(subs, f)
	}
	e.mu.Unlock()
	if len(subs) == 0 {
		return
	}
	sts := e.Status(e.ctx)
	i := slices.IndexFunc(sts, func(st proxy.ServerStatus) bool { return st.Name == name })
	if i < 0 {
		return
	}
	st := sts[i]
	e.mu.Lock()
	last, told := e.told[name]
	e.told[name] = st
	e.mu.Unlock()
	var events []Event
	if !told || !sameState(last, st) {
		events = append(events, Event{Kind: EventState, Server: name, Status: st})
	}
	if lists {
		events = append(events, Event{Kind: EventLists, Server: name, Status: st})
	}
	for _, ev := range events {
		for _, f := range subs {
			if e.ctx.Err() != nil {
				return
			}
			f(e.ctx, ev)
		}
	}
}

// sameState reports whether two statuses of a server tell the same state.
func sameState(a, b proxy.ServerStatus) bool {
	return a.State == b.State && a.ErrorClass == b.ErrorClass && a.Error == b.Error && a.ErrorAt.Equal(b.ErrorAt)
}

// sameListing reports whether b, a server listed again, holds what a, the
// catalog's entry, does: the same definition, instructions, search
// keywords and lists.
func sameListing(a, b *catalog.Entry) bool {
	return a.Hash == b.Hash && a.Instructions == b.Instructions &&
		(len(a.Keywords) == 0 && len(b.Keywords) == 0 || reflect.DeepEqual(a.Keywords, b.Keywords)) &&
		sameLists(a, b)
}

// sameLists reports whether two catalog entries of a server offer the same
// tools, resources, templates and prompts.
func sameLists(a, b *catalog.Entry) bool {
	return jsonEqual(a.Tools, b.Tools) && jsonEqual(a.Resources, b.Resources) &&
		jsonEqual(a.ResourceTemplates, b.ResourceTemplates) && jsonEqual(a.Prompts, b.Prompts)
}

// jsonEqual reports whether a and b are written as the same JSON. Values
// equal field by field are, but for the sign of a zero (reflect.DeepEqual
// takes -0 for 0; json.Marshal writes them apart): that is checked first,
// without a negative zero on either side, because it needs no encoder,
// which a process that has just started would build for the lists' types
// just for this.
func jsonEqual(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Kind() == reflect.Slice && vb.Kind() == reflect.Slice && va.Type() == vb.Type() &&
		va.Len() == vb.Len() && va.Pointer() == vb.Pointer() {
		return true // one list (a connection's, as the pool keeps it): nothing to walk
	}
	if reflect.DeepEqual(a, b) && !negativeZero(va) && !negativeZero(vb) {
		return true
	}
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && string(ja) == string(jb)
}

// negativeZero reports whether v holds a floating-point -0 anywhere.
func negativeZero(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		return f == 0 && math.Signbit(f)
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil() && negativeZero(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if negativeZero(v.Field(i)) {
				return true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if negativeZero(v.Index(i)) {
				return true
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if negativeZero(it.Key()) || negativeZero(it.Value()) {
				return true
			}
		}
	}
	return false
}
