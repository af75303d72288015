package panel

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/switchboard-mcp/switchboard/front"
)

// Approval is a call waiting for a member of an approver group, as GET
// /admin/approvals gives it (front/admin.go).
type Approval struct {
	ID        string    `json:"id"`
	Server    string    `json:"server"`
	Tool      string    `json:"tool"`
	Requester string    `json:"requester,omitempty"` // the user whose call it is
	Approvers []string  `json:"approvers"`           // the groups whose members may decide
	Rule      string    `json:"rule"`
	Since     time.Time `json:"since"`
	Args      any       `json:"args,omitempty"`
}

// Approvals returns the calls waiting for an approver group that the
// token's user may decide (GET /admin/approvals).
func (r *Remote) Approvals(ctx context.Context) ([]Approval, error) {
	var body struct {
		Approvals []Approval `json:"approvals"`
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
