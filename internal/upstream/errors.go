package upstream

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A Class says what kind of fault an error is, for status displays and for
// callers deciding what to do next.
type Class string

// Error classes.
const (
	ClassConfig    Class = "config"    // the definition cannot be used, or a reference is unset
	ClassStart     Class = "start"     // the process did not start, or exited before it was ready
	ClassExited    Class = "exited"    // the process exited after it was ready
	ClassTransport Class = "transport" // the network failed, or the session was lost
	ClassProtocol  Class = "protocol"  // the server broke the protocol (bad or oversized message)
	ClassAuth      Class = "auth"      // the server requires authorization (HTTP 401, or 403 insufficient_scope)
	ClassTimeout   Class = "timeout"   // the server's request timeout elapsed
	ClassCanceled  Class = "canceled"  // the caller gave up
	ClassServer    Class = "server"    // the server answered with an error
	ClassBound     Class = "bound"     // a discovery bound or the read cap was exceeded
	ClassClosed    Class = "closed"    // the pool is closed
	ClassDisabled  Class = "disabled"  // the server is disabled
)

// Sentinel errors, matched with errors.Is against an *Error.
var (
	ErrUnknownServer = errors.New("unknown server")
	ErrDisabled      = errors.New("server is disabled")
	ErrClosed        = errors.New("pool is closed")
	ErrNeedsAuth     = errors.New("server requires authorization")
	ErrBound         = errors.New("discovery bound exceeded") // or the read cap: any error of ClassBound
	ErrTimeout       = errors.New("request timed out")
	// ErrNotConnected: an operation under OnlyConnected found the server
	// without a connection.
	ErrNotConnected = errors.New("not connected")
)

// An Error is the error of every Pool operation. It names the server and the
// operation, and never holds a resolved secret.
type Error struct {
	Server string
	Op     string // "connecting", `calling "echo"`, "listing tools", …
	Class  Class
	Limit  time.Duration // the timeout that elapsed, for ClassTimeout
	Err    error
}

func (e *Error) Error() string {
	if e.Op == opConnect || e.Op == opReconnect {
		return fmt.Sprintf("%s %q: %v", e.Op, e.Server, e.Err)
	}
	return fmt.Sprintf("%s on %q: %v", e.Op, e.Server, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinel of the error's class.
func (e *Error) Is(target error) bool {
	switch e.Class {
	case ClassDisabled:
		return target == ErrDisabled
	case ClassClosed:
		return target == ErrClosed
	case ClassAuth:
		return target == ErrNeedsAuth
	case ClassBound:
		return target == ErrBound
	case ClassTimeout:
		return target == ErrTimeout
	}
	return false
}

// Operation names, as they appear in errors.
const (
	opConnect   = "connecting"
	opReconnect = "reconnecting"
)

// classed is an error that knows its class. Errors built inside the package
// carry one so that the class survives wrapping.
type classed struct {
	class Class
	err   error
}

func (c *classed) Error() string { return c.err.Error() }
func (c *classed) Unwrap() error { return c.err }

// withClass marks err as being of class c.
func withClass(c Class, err error) error {
	if err == nil {
		return nil
	}
	return &classed{class: c, err: err}
}

// classOf returns the class of err, or def when err does not carry one.
func classOf(err error, def Class) Class {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	var c *classed
	if errors.As(err, &c) {
		return c.class
	}
	return def
}

// errDeadline is the cause of a context whose request timeout elapsed.
var errDeadline = errors.New("request timeout")

// opError wraps err, the result of op on server under ctx (bounded by limit),
// into an *Error. A timeout becomes "timed out after 60s", a cancellation
// "canceled".
func opError(ctx context.Context, server, op string, limit time.Duration, err error, def Class) *Error {
	var e *Error
	if errors.As(err, &e) && e.Server == server {
		return e
	}
	switch {
	case ctx.Err() != nil && context.Cause(ctx) == errDeadline:
		return &Error{Server: server, Op: op, Class: ClassTimeout, Limit: limit,
			Err: fmt.Errorf("timed out after %s", fmtDuration(limit))}
	case ctx.Err() != nil:
		return &Error{Server: server, Op: op, Class: ClassCanceled, Err: ctx.Err()}
	}
	return &Error{Server: server, Op: op, Class: classOf(err, def), Err: err}
}

// fmtDuration prints whole seconds as "60s" rather than "1m0s".
func fmtDuration(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}
