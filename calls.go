package switchboard

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Call is the record of one tool call the engine made, through the proxy
// tool or a direct tool: who was called, when, for how long and how it
// ended, and the sizes of what went and came. It never holds the
// arguments, the result or an error's text, which may carry what the user
// would not show: only their sizes and the error's class.
type Call struct {
	Server   string        `json:"server"`
	Tool     string        `json:"tool"`
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"durationNs"`
	// Outcome is "ok", "error" (the tool answered with isError), "failed"
	// (no answer: the server could not be reached, broke the protocol,
	// timed out) or "canceled" (the caller gave up).
	Outcome     string `json:"outcome"`
	ErrorClass  string `json:"errorClass,omitempty"` // for "failed" and "canceled", as in ServerStatus
	ArgsBytes   int    `json:"argsBytes"`            // the arguments as JSON
	ResultBytes int    `json:"resultBytes"`          // the result as JSON, 0 without one
}

// Call outcomes.
const (
	CallOK       = "ok"
	CallError    = "error"
	CallFailed   = "failed"
	CallCanceled = "canceled"
)

// poolCall makes a tool call and, with Options.OnCall, reports it.
func (e *Engine) poolCall(ctx context.Context, server string, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if e.opts.OnCall == nil {
		return e.pool.Call(ctx, server, params)
	}
	start := time.Now()
	res, err := e.pool.Call(ctx, server, params)
	c := Call{Server: server, Tool: params.Name, Start: start, Duration: time.Since(start), Outcome: CallOK,
		ArgsBytes: jsonSize(params.Arguments)}
	switch {
	case err != nil && ctx.Err() != nil:
		c.Outcome, c.ErrorClass = CallCanceled, errorClass(err)
	case err != nil:
		c.Outcome, c.ErrorClass = CallFailed, errorClass(err)
	default:
		c.ResultBytes = jsonSize(res)
		if res.IsError {
			c.Outcome = CallError
		}
	}
	e.opts.OnCall(c)
	return res, err
}

func jsonSize(v any) int {
	if v == nil {
		return 0
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// CallLog keeps the most recent calls, for a person watching the engine:
// pass its Add as Options.OnCall. The zero value keeps none; make one with
// NewCallLog. Its methods are safe for concurrent use.
type CallLog struct {
	mu   sync.Mutex
	ring []Call // oldest first once full: next is the oldest
	next int
	full bool
}

// DefaultCallLogSize is how many calls NewCallLog keeps when told 0.
const DefaultCallLogSize = 200

// NewCallLog returns a log of the last n calls (DefaultCallLogSize when n
// is 0 or less).
func NewCallLog(n int) *CallLog {
	if n <= 0 {
		n = DefaultCallLogSize
	}
	return &CallLog{ring: make([]Call, n)}
}

// Add records a call, dropping the oldest when the log is full.
func (l *CallLog) Add(c Call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ring) == 0 {
		return
	}
	l.ring[l.next] = c
	l.next = (l.next + 1) % len(l.ring)
	if l.next == 0 {
		l.full = true
	}
}

// Recent returns the calls recorded, newest first.
func (l *CallLog) Recent() []Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.next
	if l.full {
		n = len(l.ring)
	}
	out := make([]Call, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, l.ring[(l.next-i+len(l.ring))%len(l.ring)])
	}
	return out
}
