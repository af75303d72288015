package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/dop251/goja"
)

// run is one script's run: the interpreter and what it owns. Everything
// but the channels and the context is touched only by the goroutine that
// runs the interpreter (Run's).
type run struct {
	opts Options
	host Host
	src  *source
	vm   *goja.Runtime
	ctx  context.Context // ends with the run: inner calls' context
	stop context.CancelCauseFunc

	parse goja.Callable // JSON.parse
	str   goja.Callable // JSON.stringify

	ans     Answer
	held    int // bytes of inner results and logs given to the script
	pending int // inner calls not yet delivered

	jobs chan func() error // inner calls' answers, to deliver on the interpreter's goroutine
	quit chan struct{}     // closed when the run ends: nothing is delivered any more
	wg   sync.WaitGroup    // inner calls' goroutines
}

// Run runs src with host as its tools, within opts' bounds, and returns
// its answer. It returns once every goroutine it started has ended,
// inner calls included (their context is cancelled when the script ends,
// however it ends).
func Run(ctx context.Context, host Host, src string, opts *Options) *Answer {
	o := opts.withDefaults()
	s, serr := compile(src)
	if serr != nil {
		return &Answer{Err: serr}
	}
	r := &run{opts: o, host: host, src: s, jobs: make(chan func() error), quit: make(chan struct{})}
	ctx, cancel := context.WithTimeoutCause(ctx, o.Timeout, stopTimeout(o.Timeout))
	defer cancel()
	r.ctx, r.stop = context.WithCancelCause(ctx)
	defer r.stop(nil)

	r.vm = goja.New()
	r.vm.SetMaxCallStackSize(o.MaxStackDepth)
	if err := r.install(); err != nil {
		r.ans.Err = &Error{Code: CodeFailed, Message: "setting up the script's runtime: " + err.Error() + " (this is a bug)"}
		return &r.ans
	}
	g := startGuard(r)
	r.ans.Err = r.execute()
	r.stop(nil)
	close(r.quit)
	r.wg.Wait()
	g.close()
	return &r.ans
}

// execute runs the script and its event loop until its promise settles,
// and returns why it failed, if it did.
func (r *run) execute() *Error {
	v, err := r.vm.RunProgram(r.src.prog)
	if err != nil {
		return r.failure(err)
	}
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return &Error{Code: CodeFailed, Message: "the script's wrapper did not return a promise (this is a bug)"}
	}
	for p.State() == goja.PromiseStatePending {
		if r.pending == 0 {
			// Nothing can settle it: it awaits a promise that is never
			// resolved (new Promise(() => {})).
			return &Error{Code: CodeThrown, Message: "the script awaits a promise that nothing resolves (there are no timers or events): it cannot finish"}
		}
		select {
		case deliver := <-r.jobs:
			r.pending--
			if err := deliver(); err != nil {
				return r.failure(err)
			}
		case <-r.ctx.Done():
			return r.cause()
		}
	}
	if p.State() == goja.PromiseStateRejected {
		return r.thrown(p.Result())
	}
	return r.answer(p.Result())
}

// cause is why the run's context ended.
func (r *run) cause() *Error {
	var e *Error
	if errors.As(context.Cause(r.ctx), &e) {
		return e
	}
	return errCancelled
}

// failure is the Error of an error the interpreter returned.
func (r *run) failure(err error) *Error {
	var intr *goja.InterruptedError
	if errors.As(err, &intr) {
		if s, ok := intr.Value().(stopped); ok {
			return s.err
		}
		return r.cause()
	}
	var so *goja.StackOverflowError
	if errors.As(err, &so) {
		return &Error{Code: CodeThrown, Message: "the script's call stack grew too deep (recursion without end?): stopped"}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return r.thrown(ex.Value())
	}
	return &Error{Code: CodeFailed, Message: err.Error()}
}

// thrown is the Error of a value the script threw, placed where it was
// thrown when it is an Error with a stack.
func (r *run) thrown(v goja.Value) *Error {
	e := &Error{Code: CodeThrown}
	msg := "undefined"
	if v != nil {
		msg = v.String()
	}
	if o, ok := v.(*goja.Object); ok {
		if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) {
			e.Line, e.Col, _ = r.src.where(st.String())
		}
		if strings.Contains(msg, "Maximum call stack size exceeded") {
			msg += " (recursion without end?)"
		}
	}
	if e.Line > 0 {
		e.Message = fmt.Sprintf("the script threw at line %d:%d: %s", e.Line, e.Col, msg)
	} else {
		e.Message = "the script threw: " + msg
	}
	return e
}

// answer records the script's result as JSON.
func (r *run) answer(v goja.Value) *Error {
	if v == nil || goja.IsUndefined(v) {
		return nil
	}
	s, err := r.str(goja.Undefined(), v)
	if err != nil {
		if e := r.failure(err); e.Code != CodeThrown {
			return e
		}
		return &Error{Code: CodeNoAnswer, Message: "the script's answer cannot be written as JSON: " + err.Error()}
	}
	if goja.IsUndefined(s) { // a function, a symbol
		return nil
	}
	r.ans.Value = []byte(s.String())
	return nil
}

// hold counts n more bytes given to the script, and stops it past
// MaxHeldBytes.
func (r *run) hold(n int) {
	r.held += n
	if r.held > r.opts.MaxHeldBytes {
		r.interrupt(&Error{Code: CodeMemory, Message: fmt.Sprintf("the script holds more than %d bytes of tool results and console output: stopped; keep less of each result", r.opts.MaxHeldBytes)})
	}
}

// interrupt stops the script with e: the interpreter at its next step,
// and the inner calls.
func (r *run) interrupt(e *Error) {
	r.stop(e)
	r.vm.Interrupt(stopped{e})
}

// fromJSON makes a JavaScript value of JSON data.
func (r *run) fromJSON(b []byte) (goja.Value, error) {
	return r.parse(goja.Undefined(), r.vm.ToValue(string(b)))
}

// marshal returns the JSON of data for the script, refusing what is over
// MaxResultBytes.
func (r *run) marshal(data any) ([]byte, *Error) {
	b, err := json.Marshal(data)
	if err != nil {
		return nil, &Error{Code: CodeFailed, Message: "encoding the result: " + err.Error()}
	}
	if len(b) > r.opts.MaxResultBytes {
		return nil, &Error{Code: CodeTooLarge, Message: fmt.Sprintf("the result is %d bytes, over the %d a script may take in one result: ask for less (a smaller page, a narrower query, a head or tail argument)", len(b), r.opts.MaxResultBytes)}
	}
	return b, nil
}
