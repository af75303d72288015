package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja"
)

// install gives the script its globals: tools and console, nothing else
// beyond the language's own.
func (r *run) install() error {
	j := r.vm.Get("JSON").ToObject(r.vm)
	var ok1, ok2 bool
	r.parse, ok1 = goja.AssertFunction(j.Get("parse"))
	r.str, ok2 = goja.AssertFunction(j.Get("stringify"))
	if !ok1 || !ok2 {
		return errors.New("JSON.parse or JSON.stringify is missing")
	}
	tools := r.vm.NewObject()
	console := r.vm.NewObject()
	return errors.Join(
		tools.Set("search", r.search),
		tools.Set("describe", r.describe),
		tools.Set("call", r.call),
		console.Set("log", r.logger("")),
		console.Set("info", r.logger("")),
		console.Set("error", r.logger("error: ")),
		console.Set("warn", r.logger("warn: ")),
		r.vm.Set("tools", tools),
		r.vm.Set("console", console),
	)
}

// search is tools.search({query, server?, limit?, offset?}).
func (r *run) search(c goja.FunctionCall) goja.Value {
	var q Query
	if e := r.object(c.Argument(0), "tools.search({query, server?, limit?, offset?})", &q); e != nil {
		return r.settled(nil, e)
	}
	if strings.TrimSpace(q.Query) == "" {
		return r.settled(nil, invalid("tools.search needs a query: tools.search({query: \"create issue\"})"))
	}
	return r.async(func(ctx context.Context) (any, error) { return r.host.Search(ctx, q) })
}

// describe is tools.describe({path, server?}).
func (r *run) describe(c goja.FunctionCall) goja.Value {
	var q struct {
		Path   string `json:"path"`
		Server string `json:"server,omitempty"`
	}
	if e := r.object(c.Argument(0), "tools.describe({path, server?})", &q); e != nil {
		return r.settled(nil, e)
	}
	if q.Path == "" {
		return r.settled(nil, invalid("tools.describe needs a path, the tool's name: tools.describe({path: \"read_file\"})"))
	}
	return r.async(func(ctx context.Context) (any, error) { return r.host.Describe(ctx, q.Path, q.Server) })
}

// call is tools.call(path, args, {server}?).
func (r *run) call(c goja.FunctionCall) goja.Value {
	path, ok := c.Argument(0).Export().(string)
	if !ok || path == "" {
		return r.settled(nil, invalid("tools.call needs the tool's name first: tools.call(\"read_file\", {path: \"a.txt\"}, {server: \"filesystem\"})"))
	}
	args := map[string]any{}
	if a := c.Argument(1); !goja.IsUndefined(a) && !goja.IsNull(a) {
		if e := r.object(a, "tools.call(path, args, {server}?): args", &args); e != nil {
			return r.settled(nil, e)
		}
	}
	var o struct {
		Server string `json:"server,omitempty"`
	}
	if a := c.Argument(2); !goja.IsUndefined(a) && !goja.IsNull(a) {
		if e := r.object(a, "tools.call(path, args, {server}?): the options", &o); e != nil {
			return r.settled(nil, e)
		}
	}
	return r.async(func(ctx context.Context) (any, error) { return r.host.Call(ctx, path, o.Server, args) })
}

func invalid(msg string) *Error { return &Error{Code: CodeInvalid, Message: msg} }

// object decodes a plain object argument into v, strictly: an unknown
// field is an error naming it.
func (r *run) object(a goja.Value, what string, v any) *Error {
	if o, ok := a.(*goja.Object); !ok || o.ClassName() != "Object" {
		return invalid(what + ": expected an object")
	}
	s, err := r.str(goja.Undefined(), a)
	if err != nil {
		return invalid(fmt.Sprintf("%s: %v", what, err))
	}
	d := json.NewDecoder(strings.NewReader(s.String()))
	if _, isMap := v.(*map[string]any); !isMap {
		d.DisallowUnknownFields()
	}
	if err := d.Decode(v); err != nil {
		return invalid(fmt.Sprintf("%s: %v", what, err))
	}
	return nil
}

// async starts an inner call on a goroutine of its own and returns the
// promise its answer resolves. Past MaxCalls the script is stopped.
func (r *run) async(do func(ctx context.Context) (any, error)) goja.Value {
	r.ans.Calls++
	if r.ans.Calls > r.opts.MaxCalls {
		r.interrupt(&Error{Code: CodeCallLimit, Message: fmt.Sprintf("the script made more than %d tool calls (search, describe and call together): stopped; do the rest in another script", r.opts.MaxCalls)})
		return goja.Undefined()
	}
	p, resolve, _ := r.vm.NewPromise()
	r.pending++
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		data, err := do(r.ctx)
		var b []byte
		var e *Error
		if err != nil {
			e = codeOf(err)
		}
		if data != nil && (err == nil || e.Code == CodeToolError) {
			var me *Error
			if b, me = r.marshal(data); me != nil {
				b, e = nil, me
			}
		}
		deliver := func() error { return resolve(r.outcome(b, e)) }
		select {
		case r.jobs <- deliver:
		case <-r.quit:
		}
	}()
	return r.vm.ToValue(p)
}

// settled returns a promise already settled with an outcome: the answer
// to a call the script made wrongly.
func (r *run) settled(b []byte, e *Error) goja.Value {
	p, resolve, _ := r.vm.NewPromise()
	if err := resolve(r.outcome(b, e)); err != nil {
		return goja.Undefined() // interrupted: the script stops
	}
	return r.vm.ToValue(p)
}

// outcome is {ok: true, data} or {ok: false, error: {code, message}},
// with data too when a tool answered with an error.
func (r *run) outcome(b []byte, e *Error) goja.Value {
	o := r.vm.NewObject()
	_ = o.Set("ok", e == nil)
	if e != nil {
		eo := r.vm.NewObject()
		_ = eo.Set("code", e.Code)
		_ = eo.Set("message", e.Message)
		_ = o.Set("error", eo)
	}
	if b != nil {
		r.hold(len(b))
		v, err := r.fromJSON(b)
		if err != nil {
			v = goja.Undefined()
		}
		_ = o.Set("data", v)
	}
	return o
}

// logger returns a console function that writes a line, prefixed.
func (r *run) logger(prefix string) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		parts := make([]string, len(c.Arguments))
		for i, a := range c.Arguments {
			parts[i] = r.text(a)
		}
		line := prefix + strings.Join(parts, " ")
		r.hold(len(line) + 1)
		r.ans.Logs = append(r.ans.Logs, line)
		return goja.Undefined()
	}
}

// text is how console shows a value: a string as it is, anything else
// as JSON where it can be, else as String(v).
func (r *run) text(v goja.Value) string {
	if s, ok := v.Export().(string); ok {
		return s
	}
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "Error" {
		return v.String()
	}
	if j, err := r.str(goja.Undefined(), v); err == nil && !goja.IsUndefined(j) {
		return j.String()
	}
	return v.String()
}
