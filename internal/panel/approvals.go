package panel

import (
	"context"
	"errors"
	"net/url"

	"github.com/switchboard-mcp/switchboard/front"
	gw "github.com/switchboard-mcp/switchboard/internal/gateway"
)

// Approvals returns the calls waiting for an approver group that the
// token's user may decide (GET /admin/approvals).
func (r *Remote) Approvals(ctx context.Context) ([]gw.PendingApproval, error) {
	var body struct {
		Approvals []gw.PendingApproval `json:"approvals"`
	}
	err := r.get(ctx, "GET", "/admin/approvals", &body)
	return body.Approvals, err
}

// Decide allows (allow) or denies the pending call id (POST
// /admin/approvals/{id}).
func (r *Remote) Decide(ctx context.Context, id string, allow bool) error {
	decision := "deny"
	if allow {
		decision = "allow"
	}
	var res front.AdminDecision
	if err := r.send(ctx, "POST", "/admin/approvals/"+url.PathEscape(id), map[string]string{"decision": decision}, &res); err != nil {
		return err
	}
	if res.Error != "" {
		return errors.New(res.Error)
	}
	return nil
}
