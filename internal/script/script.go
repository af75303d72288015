// Package script runs code mode's scripts: JavaScript an agent writes to
// search, describe and call tools and combine their results, so that only
// the script's answer enters the model's context.
//
// The interpreter is goja (pure Go). A script has no I/O of its own: no
// require, file system, network, timers or process; what it can do is
// what its Host lets it, through three functions whose contract is
// pi-mcp-adapter's (so scripts written for it run unchanged):
//
//	await tools.search({query, server?, limit?, offset?})
//	await tools.describe({path, server?})
//	await tools.call(path, args, {server}?)
//
// each resolving to {ok: true, data} or {ok: false, error: {code, message}}
// (data of a call is the raw MCP result). console.log, .error and .warn
// are captured into the answer. The script is the body of an async
// function: await works at its top, and its answer is what it returns, or
// the value of its last statement when that is an expression.
//
// Bounds (Options): a deadline, a cap on inner calls, the interpreter's
// call stack depth, the size of each inner result, the bytes held from
// inner results and console output, and the heap the process grows by
// while the script runs (see guard.go). Each stops the script with an
// error that says which bound, and Run returns only once nothing it
// started is still running.
package script

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Host is what a script's tools reach: the engine, in the session of the
// call that runs the script. Its methods are called concurrently (a script
// may await several calls at once), each with a context that ends when the
// script does. An error that is an *Error keeps its code; any other is
// reported as code "failed" (or "timeout", "cancelled" for the context's).
type Host interface {
	// Search returns what a search found, as data the script reads.
	Search(ctx context.Context, q Query) (any, error)
	// Describe returns one tool in full, as data the script reads.
	Describe(ctx context.Context, path, server string) (any, error)
	// Call calls a tool once and returns its raw MCP result. A tool that
	// answered with isError gives its result and an *Error of code
	// CodeToolError saying what it said.
	Call(ctx context.Context, path, server string, args map[string]any) (result any, err error)
}

// Query is a search's request, as tools.search takes it.
type Query struct {
	Query  string `json:"query"`
	Server string `json:"server,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Offset int    `json:"offset,omitempty"`
}

// Options bounds a run. The zero value of a field is its default.
type Options struct {
	Timeout        time.Duration // the whole run, inner calls included; default 30 s
	MaxCalls       int           // inner calls of search, describe and call together; default 100
	MaxResultBytes int           // one inner result, as JSON; default 1 MiB
	MaxHeldBytes   int           // inner results and console output together; default 16 MiB
	MaxHeapGrowth  uint64        // growth of the process's heap during the run; default 128 MiB (see guard.go)
	MaxStackDepth  int           // the interpreter's call stack; default 1000
}

// Defaults of Options.
const (
	DefaultTimeout        = 30 * time.Second
	DefaultMaxCalls       = 100
	DefaultMaxResultBytes = 1 << 20
	DefaultMaxHeldBytes   = 16 << 20
	DefaultMaxHeapGrowth  = 128 << 20
	DefaultMaxStackDepth  = 1000
)

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.Timeout <= 0 {
		out.Timeout = DefaultTimeout
	}
	if out.MaxCalls <= 0 {
		out.MaxCalls = DefaultMaxCalls
	}
	if out.MaxResultBytes <= 0 {
		out.MaxResultBytes = DefaultMaxResultBytes
	}
	if out.MaxHeldBytes <= 0 {
		out.MaxHeldBytes = DefaultMaxHeldBytes
	}
	if out.MaxHeapGrowth == 0 {
		out.MaxHeapGrowth = DefaultMaxHeapGrowth
	}
	if out.MaxStackDepth <= 0 {
		out.MaxStackDepth = DefaultMaxStackDepth
	}
	return out
}

// Answer is what a run gives back.
type Answer struct {
	// Value is the script's answer as JSON; nil when it gave none
	// (undefined).
	Value []byte
	// Logs are the lines console.log, .error and .warn wrote, in order;
	// those of .error and .warn begin "error: " and "warn: ".
	Logs []string
	// Calls counts the inner calls the script made (search, describe and
	// call).
	Calls int
	// Err is why the script failed, if it did; the logs so far are kept.
	Err *Error
}

// Error is an error a script sees ({code, message} of a tool's answer) or
// why a script failed; Line and Col, when known, place it in the script
// (1-based).
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Codes of Error. Those of an inner call's error may also be the Host's
// own (see package gateway's scriptHost).
const (
	CodeSyntax    = "syntax_error"   // the script does not parse
	CodeThrown    = "thrown"         // the script threw, or its promise was rejected
	CodeTimeout   = "timeout"        // the deadline passed
	CodeCancelled = "cancelled"      // the run's context was cancelled
	CodeCallLimit = "call_limit"     // more inner calls than MaxCalls
	CodeMemory    = "memory_limit"   // MaxHeldBytes or MaxHeapGrowth
	CodeTooLarge  = "too_large"      // an inner result over MaxResultBytes (an inner call's error)
	CodeInvalid   = "invalid"        // a tool function called with bad arguments (an inner call's error)
	CodeFailed    = "failed"         // an inner call failed for another reason
	CodeToolError = "tool_error"     // the tool answered with isError (an inner call's error)
	CodeNoAnswer  = "unserializable" // the answer cannot be written as JSON
)

// codeOf returns the Error for an error of the Host.
func codeOf(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeTimeout, Message: err.Error()}
	case errors.Is(err, context.Canceled):
		return &Error{Code: CodeCancelled, Message: err.Error()}
	}
	return &Error{Code: CodeFailed, Message: err.Error()}
}

// stopped is why a run was stopped from outside the interpreter: the
// value it is interrupted with.
type stopped struct{ err *Error }

func stopTimeout(d time.Duration) *Error {
	return &Error{Code: CodeTimeout, Message: fmt.Sprintf("the script ran past its deadline of %v (settings.scriptTimeoutMs): stopped; do less in one script, or split the work", d)}
}

var errCancelled = &Error{Code: CodeCancelled, Message: "the script was cancelled: its call was cancelled"}
