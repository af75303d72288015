// Package policy decides what Switchboard lets an agent do: which tool
// calls ask a person first (approval rules, and approvals given for a
// session), which tool definitions changed since the user first saw them
// (pinning), and what is written to the audit trail. It holds decisions
// and records, not I/O with servers: the engine gathers, asks here, and
// acts on the answer.
//
// See docs/policy.md for the user's view.
package policy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
)

// Needs reports whether a call of tool (its original name; prefixed is its
// server_tool name) needs approval under rule. ann is the tool's
// annotations as the server gave them, nil for none.
func Needs(rule config.Approval, tool, prefixed string, ann *mcp.ToolAnnotations) bool {
	switch rule.Mode {
	case config.ApproveAlways:
		return true
	case config.ApproveDestructive:
		return Destructive(ann)
	case config.ApproveTools:
		for _, g := range rule.Tools {
			if config.Glob(g, tool) || config.Glob(g, prefixed) {
				return true
			}
		}
	}
	return false
}

// Destructive reports whether a tool with these annotations may change its
// environment destructively, by the protocol's defaults: unless it says
// readOnlyHint: true or destructiveHint: false, it may. A tool without
// annotations counts.
func Destructive(ann *mcp.ToolAnnotations) bool {
	if ann == nil {
		return true
	}
	if ann.ReadOnlyHint {
		return false
	}
	return ann.DestructiveHint == nil || *ann.DestructiveHint
}

// Unmatched returns the globs of rule that match none of tools (original
// names of one server; prefixed gives a tool's prefixed name). A glob that
// matches nothing asks for nothing, which is most likely a mistake.
func Unmatched(rule config.Approval, tools []string, prefixed func(string) string) []string {
	var out []string
	for _, g := range rule.Tools {
		found := false
		for _, t := range tools {
			if config.Glob(g, t) || config.Glob(g, prefixed(t)) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, g)
		}
	}
	return out
}

// Decision is the answer to an approval request.
type Decision string

// Decisions.
const (
	AllowOnce    Decision = "allow-once"
	AllowSession Decision = "allow-session"
	Deny         Decision = "deny"
)

// Allows reports whether the call may go ahead.
func (d Decision) Allows() bool { return d == AllowOnce || d == AllowSession }

// Request is what a person is asked to approve: one call of one tool.
type Request struct {
	Server   string
	Tool     string // original name
	Prefixed string // server_tool
	// Args are the arguments as the server will see them.
	Args any
	Rule config.Approval
}

// Approver asks a person whether a call may go ahead. It returns Deny, or
// an error, when the person says no or cannot be asked; the call is then
// sent nowhere. It must return when ctx is done.
type Approver func(ctx context.Context, req *Request) (Decision, error)

type approverKey struct{}

// WithApprover returns a context whose calls are approved by a; it takes
// precedence over the engine's own approver. switchboard serve sets one
// per client request that asks the client.
func WithApprover(ctx context.Context, a Approver) context.Context {
	return context.WithValue(ctx, approverKey{}, a)
}

// ApproverFrom returns the approver ctx carries, or nil.
func ApproverFrom(ctx context.Context) Approver {
	a, _ := ctx.Value(approverKey{}).(Approver)
	return a
}

// ErrNoApprover is the cause of a denial when no one can be asked. An
// approver that cannot ask anyone (the client of the call cannot be sent a
// form) returns an error that matches it (errors.Is), so that the denial
// says how else the call can be approved.
var ErrNoApprover = errors.New("there is no one to ask")

// Answer is the outcome of Ask.
type Answer struct {
	Decision Decision
	// Why says why a call was denied without a person saying so: no one to
	// ask, the answer came late or could not be read.
	Why string
	// Unasked reports a denial because no one could be asked (ErrNoApprover).
	Unasked bool
}

// Ask asks approve about req and waits at most timeout for the answer. A
// nil approver, an error, an answer that is not one of the three
// decisions, and an answer that comes after the timeout are all Deny, with
// Why saying which.
func Ask(ctx context.Context, approve Approver, req *Request, timeout time.Duration) Answer {
	if approve == nil {
		return Answer{Decision: Deny, Why: ErrNoApprover.Error(), Unasked: true}
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	d, err := approve(actx, req)
	switch {
	case actx.Err() != nil && ctx.Err() == nil:
		return Answer{Decision: Deny, Why: fmt.Sprintf("no answer within %s (the request timeout)", timeout)}
	case ctx.Err() != nil:
		return Answer{Decision: Deny, Why: "the request was cancelled"}
	case err != nil:
		return Answer{Decision: Deny, Why: err.Error(), Unasked: errors.Is(err, ErrNoApprover)}
	case d == AllowOnce, d == AllowSession:
		return Answer{Decision: d}
	case d == Deny:
		return Answer{Decision: Deny, Why: "denied"}
	}
	return Answer{Decision: Deny, Why: fmt.Sprintf("the answer %q is not one of allow-once, allow-session, deny", truncate(string(d), 40))}
}

// DeniedError is the error of a call that needed approval and did not get
// it. It names the rule and says how to stop being asked, or, when no one
// could be asked (Unasked), how the call can be approved.
type DeniedError struct {
	Request *Request
	Why     string
	Unasked bool
}

func (e *DeniedError) Error() string {
	if e.Unasked {
		return unaskedText(e.Request, e.Why)
	}
	return fmt.Sprintf("call of %q on %q not approved (%s), so it was sent nowhere: it needs approval by the rule at %s; "+
		"hint: answer \"allow for this session\" to stop being asked in this session, use switchboard call --yes from the command line, "+
		"or change the rule (for example \"approve\": [\"tool globs\"] lists only the tools that ask)",
		e.Request.Tool, e.Request.Server, e.Why, e.Request.Rule.Where())
}

// Grants are the approvals given for the rest of one agent session: in
// memory only, forgotten when the session ends. The zero value is empty and
// ready; a Grants is safe for concurrent use.
type Grants struct {
	mu sync.Mutex
	m  map[grantKey]bool
}

type grantKey struct{ server, tool string }

// Allowed reports whether calls of the tool were allowed for the session.
func (g *Grants) Allowed(server, tool string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.m[grantKey{server, tool}]
}

// Grant allows calls of the tool for the rest of the session.
func (g *Grants) Grant(server, tool string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[grantKey]bool{}
	}
	g.m[grantKey{server, tool}] = true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
