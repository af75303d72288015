package front

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/policy"
)

// approving returns ctx with an approver that asks the client of session
// ss, for a call an approval rule covers (docs/policy.md): with a
// form-mode elicitation when the client declared elicitation, through an
// input request for a multi round-trip client (2026-07-28) whose call the
// bridge suspended and which declared elicitation with it, and otherwise
// not at all: the call is then denied with policy.ErrNoElicitation, and
// its result says how else it can be approved.
func (s *Server) approving(ctx context.Context, ss *mcp.ServerSession) context.Context {
	return policy.WithApprover(ctx, func(ctx context.Context, req *policy.Request) (policy.Decision, error) {
		params := policy.ElicitParams(req)
		if sp, ok := ctx.Value(suspendedKey{}).(*suspended); ok {
			if sp.caps == nil || sp.caps.Elicitation == nil {
				return policy.Deny, policy.ErrNoElicitation
			}
			resp, err := sp.askClient(ctx, s.bridge.inputID(), params)
			if err != nil {
				return policy.Deny, err
			}
			res, ok := resp.(*mcp.ElicitResult)
			if !ok {
				return policy.Deny, fmt.Errorf("the client answered the approval form with %T", resp)
			}
			return policy.Decide(res)
		}
		// Without a session (a stateless call on the fast lane, where go-sdk
		// has an uninitialized one), nothing was declared either.
		if p := initParams(ss); p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
			return policy.Deny, policy.ErrNoElicitation
		}
		res, err := ss.Elicit(ctx, params)
		if err != nil {
			return policy.Deny, fmt.Errorf("asking the client: %w", err)
		}
		return policy.Decide(res)
	})
}

// initParams returns the client's initialize parameters, nil without a
// session or before it initialized.
func initParams(ss *mcp.ServerSession) *mcp.InitializeParams {
	if ss == nil {
		return nil
	}
	return ss.InitializeParams()
}
