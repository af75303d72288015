package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/policy"
)

// PendingApproval is a call waiting for a member of an approver group
// (an approval rule's "approvers") to allow or deny it.
type PendingApproval struct {
	ID     string `json:"id"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Requester is the user whose call it is (a token's subject).
	Requester string `json:"requester,omitempty"`
	// Approvers are the groups whose members may decide.
	Approvers []string  `json:"approvers"`
	Rule      string    `json:"rule"`
	Since     time.Time `json:"since"`
	// Args are the call's arguments, as the server would get them.
	Args any `json:"args,omitempty"`
}

// Errors of DecideApproval.
var (
	ErrNoApproval  = errors.New("no such pending approval")
	ErrNotApprover = errors.New("not a member of the approver groups")
)

// pendingApprovals are the calls waiting for an approver group, by ID:
// this replica's, which a decision made here ends at once; and, with a
// shared store, every replica's in it (approvals_pg.go).
type pendingApprovals struct {
	shared *sharedApprovals // nil without a shared store

	mu   sync.Mutex
	next int
	m    map[string]*pendingCall
}

type pendingCall struct {
	PendingApproval
	answer chan policy.Decision // gets one decision
	by     string               // who decided; set before answer is sent
}

// groupApprover returns the approver of a call that a rule's approver
// groups decide: it lists the call (PendingApprovals) until a member
// decides (DecideApproval) or ctx ends, which policy.Ask bounds by the
// request timeout. by returns who decided, once it has returned.
func (e *Engine) groupApprover(requester string) (approve policy.Approver, by func() string) {
	var call *pendingCall
	approve = func(ctx context.Context, req *policy.Request) (policy.Decision, error) {
		shared := e.pending.shared
		e.pending.mu.Lock()
		e.pending.next++
		id := strconv.Itoa(e.pending.next)
		if shared != nil {
			id = shared.newID()
		}
		call = &pendingCall{PendingApproval: PendingApproval{ID: id, Server: req.Server, Tool: req.Tool,
			Requester: requester, Approvers: slices.Clone(req.Rule.Approvers), Rule: req.Rule.Where(), Since: e.now(), Args: req.Args},
			answer: make(chan policy.Decision, 1)}
		if e.pending.m == nil {
			e.pending.m = map[string]*pendingCall{}
		}
		e.pending.m[call.ID] = call
		e.pending.mu.Unlock()
		defer func() {
			e.pending.mu.Lock()
			delete(e.pending.m, call.ID)
			e.pending.mu.Unlock()
		}()
		var poll <-chan time.Time
		if shared != nil {
			expires, ok := ctx.Deadline()
			if !ok {
				expires = e.now().Add(time.Hour)
			}
			if err := shared.add(ctx, &call.PendingApproval, expires); err != nil {
				return policy.Deny, err
			}
			defer shared.remove(call.ID)
			t := time.NewTicker(pollDecision)
			defer t.Stop()
			poll = t.C
		}
		for {
			select {
			case d := <-call.answer:
				return d, nil
			case <-ctx.Done():
				return policy.Deny, ctx.Err()
			case <-poll:
				allow, who, ok, forged, err := shared.decision(ctx, call.ID)
				switch {
				case err != nil && ctx.Err() == nil:
					e.log.Warn("reading an approval's decision in the shared store; trying again", "id", call.ID, "err", err)
				case forged:
					e.log.Warn("an approval's decision in the shared store is not signed with the store's key: ignored, the call still waits", "id", call.ID)
				case ok:
					e.pending.mu.Lock()
					call.by = who
					e.pending.mu.Unlock()
					if allow {
						return policy.AllowOnce, nil
					}
					return policy.Deny, nil
				}
			}
		}
	}
	by = func() string {
		if call == nil {
			return ""
		}
		e.pending.mu.Lock()
		defer e.pending.mu.Unlock()
		return call.by
	}
	return approve, by
}

// PendingApprovals returns the calls waiting for a decision that a member
// of groups may make, oldest first; all of them when all is set (the
// holder of a serve's shared token, who is its one person). With a shared
// store, they are every replica's.
func (e *Engine) PendingApprovals(ctx context.Context, groups []string, all bool) ([]PendingApproval, error) {
	if sh := e.pending.shared; sh != nil {
		listed, err := sh.list(ctx)
		if err != nil {
			return nil, err
		}
		return slices.DeleteFunc(listed, func(p PendingApproval) bool { return !all && !mayApprove(p.Approvers, groups) }), nil
	}
	e.pending.mu.Lock()
	defer e.pending.mu.Unlock()
	out := []PendingApproval{}
	for _, c := range e.pending.m {
		if all || mayApprove(c.Approvers, groups) {
			out = append(out, c.PendingApproval)
		}
	}
	slices.SortFunc(out, func(a, b PendingApproval) int {
		x, _ := strconv.Atoi(a.ID)
		y, _ := strconv.Atoi(b.ID)
		return x - y
	})
	return out, nil
}

// DecideApproval allows or denies (allow false) the pending call id for
// approver, a member of groups (or anyone, with all). The call's wait
// ends at once; the decision is audited with both names.
func (e *Engine) DecideApproval(ctx context.Context, id, approver string, groups []string, all, allow bool) error {
	if sh := e.pending.shared; sh != nil {
		err := sh.decide(ctx, id, approver, allow, func(p *PendingApproval) error {
			if !all && !mayApprove(p.Approvers, groups) {
				return fmt.Errorf("deciding approval %q: %w %q", id, ErrNotApprover, p.Approvers)
			}
			return nil
		})
		if err != nil {
			return err
		}
		// The decision is the store's; a call waiting here hears of it
		// at once, one elsewhere at its next read.
		e.pending.mu.Lock()
		defer e.pending.mu.Unlock()
		if c := e.pending.m[id]; c != nil {
			c.by = approver
			delete(e.pending.m, id)
			d := policy.Deny
			if allow {
				d = policy.AllowOnce
			}
			c.answer <- d
		}
		return nil
	}
	e.pending.mu.Lock()
	defer e.pending.mu.Unlock()
	c := e.pending.m[id]
	switch {
	case c == nil:
		return fmt.Errorf("deciding approval %q: %w (it was decided, or its call gave up waiting; list them with switchboard approvals)", id, ErrNoApproval)
	case !all && !mayApprove(c.Approvers, groups):
		return fmt.Errorf("deciding approval %q: %w %q", id, ErrNotApprover, c.Approvers)
	}
	d := policy.Deny
	if allow {
		d = policy.AllowOnce
	}
	c.by = approver
	delete(e.pending.m, id)
	c.answer <- d
	return nil
}

func mayApprove(approvers, groups []string) bool {
	return slices.ContainsFunc(approvers, func(g string) bool { return slices.Contains(groups, g) })
}
