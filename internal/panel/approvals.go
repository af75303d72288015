package panel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

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
		Error     string     `json:"error"` // a store that does not answer: 503
	}
	if err := r.get(ctx, "GET", "/admin/approvals", &body); err != nil {
		return nil, err
	}
	if body.Error != "" {
		return nil, fmt.Errorf("GET %s/admin/approvals: %s", r.Base, body.Error)
	}
	return body.Approvals, nil
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

// approvals is a backend whose calls may wait for an approver group:
// Remote. A local panel has none (approver groups decide only on a
// gateway that other people call), and so no approvals screen.
type approvals interface {
	Approvals(ctx context.Context) ([]Approval, error)
	Decide(ctx context.Context, id string, allow bool) error
}

// approvalsMsg is a new list of the calls waiting.
type approvalsMsg struct {
	list []Approval
	err  error
}

// decision is an allow or a deny waiting for its confirmation (y).
type decision struct {
	a     Approval
	allow bool
}

// argsShown bounds the arguments shown of the selected call, in bytes of
// indented JSON: the rest is cut with a note of how much.
const argsShown = 4 << 10

// loadApprovals reads the calls waiting; nil for a backend without them.
func (m *Model) loadApprovals() tea.Cmd {
	ab, ok := m.b.(approvals)
	if !ok {
		return nil
	}
	ctx := m.ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		list, err := ab.Approvals(ctx)
		return approvalsMsg{list: list, err: err}
	}
}

// gotApprovals takes a new list, keeping the selection on the call it
// was on while that call waits.
func (m *Model) gotApprovals(msg approvalsMsg) {
	m.apprLoaded = true
	m.apprErr = msg.err
	if msg.err != nil {
		m.appr = nil
		m.apprSel = 0
		return
	}
	var id string
	if m.apprSel < len(m.appr) {
		id = m.appr[m.apprSel].ID
	}
	// Oldest first, as the gateway gives them; the sort keeps that for a
	// gateway that does not.
	m.appr = slices.Clone(msg.list)
	slices.SortStableFunc(m.appr, func(a, b Approval) int { return a.Since.Compare(b.Since) })
	m.apprSel = clampSel(m.apprSel, len(m.appr))
	for i, a := range m.appr {
		if a.ID == id {
			m.apprSel = i
		}
	}
}

// approvalsKey handles a key on the approvals screen: a and d ask to
// confirm the decision on the selected call.
func (m *Model) approvalsKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "a", "d":
		if len(m.appr) == 0 {
			return nil
		}
		if m.busy != "" {
			m.say(nil, "wait: "+m.busy)
			return nil
		}
		m.confirm = &decision{a: m.appr[m.apprSel], allow: k.String() == "a"}
		m.msg = ""
		return nil
	}
	m.apprSel = moveSel(m.apprSel, len(m.appr), k.String())
	return nil
}

// confirmKey takes the key after a or d: y decides, any other cancels.
func (m *Model) confirmKey(k tea.KeyPressMsg) tea.Cmd {
	d := m.confirm
	m.confirm = nil
	what := approvalName(d.a)
	if k.String() != "y" {
		m.say(nil, "not decided: "+what)
		return nil
	}
	ab := m.b.(approvals)
	verb, done := "denying", "denied"
	if d.allow {
		verb, done = "allowing", "allowed"
	}
	return m.run(verb+" "+what+"…", func(ctx context.Context) (string, error) {
		return done + " " + what, ab.Decide(ctx, d.a.ID, d.allow)
	})
}

// approvalName names a waiting call in the message line.
func approvalName(a Approval) string {
	s := fmt.Sprintf("%s on %s", a.Tool, a.Server)
	if a.Requester != "" {
		s += " by " + a.Requester
	}
	return s + " (approval " + a.ID + ")"
}

// confirmLine asks for the confirmation of a decision.
func (m *Model) confirmLine() string {
	verb := "deny"
	if m.confirm.allow {
		verb = "allow"
	}
	return fmt.Sprintf("%s %s? y to %s, any other key cancels", verb, approvalName(m.confirm.a), verb)
}

// approvalsCount is the count of waiting calls on the approvals tab,
// empty when none waits: "(1 waiting)". It is in the tab's label, like
// the problems' count, so that the gateway's URL does not push the tabs
// off an 100-column line.
func (m *Model) approvalsCount() string {
	if len(m.appr) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d waiting)", len(m.appr))
}

func (m *Model) approvalsView() []string {
	switch {
	case m.apprErr != nil:
		out := m.wrap(m.pal.Bad("approvals not shown: ")+oneLine(m.apprErr.Error()), 4)
		return append(out, "", "The other screens work. The calls waiting for an approver group show to a token that may",
			"decide them, on a switchboard serve --http with its admin endpoint (docs/team.md).")
	case !m.apprLoaded:
		return []string{"reading approvals…"}
	case len(m.appr) == 0:
		return []string{"No call waits for your approval.", "",
			`A call waits here when its approval rule names approver groups you are in ("approvers", docs/team.md).`}
	}
	var rows [][]string
	for _, a := range m.appr {
		who := a.Requester
		if who == "" {
			who = "-"
		}
		rows = append(rows, []string{m.waited(a.Since), a.ID, a.Server, a.Tool, who, strings.Join(a.Approvers, ", ")})
	}
	// The selected call's rule, whole (a place in a file), and its
	// arguments below the table.
	a := m.appr[m.apprSel]
	h := m.bodyHeight()
	tableRoom := max(2, min(len(rows)+1, (h+1)/2))
	body := m.table([]string{"WAITING", "ID", "SERVER", "TOOL", "REQUESTER", "APPROVERS"}, rows, m.apprSel, tableRoom, nil)
	body = append(body, "")
	body = append(body, m.wrap(m.pal.Head("rule")+" "+m.tilde(a.Rule), 2)...)
	body = append(body, m.pal.Head("arguments of "+a.ID))
	return append(body, m.argsLines(a.Args, h-len(body))...)
}

// argsLines are a call's arguments as indented JSON, at most argsShown
// bytes and n lines (the screen cuts each to its width). JSON escapes every control
// character, so what a caller sent cannot drive the terminal.
func (m *Model) argsLines(args any, n int) []string {
	if args == nil {
		return []string{m.pal.Dim("(none)")}
	}
	b, err := json.MarshalIndent(args, "", "  ")
	if err != nil {
		return []string{m.pal.Bad("the arguments are not JSON: " + err.Error())}
	}
	s, cut := string(b), 0
	if len(s) > argsShown {
		cut = len(s) - argsShown
		s = strings.ToValidUTF8(s[:argsShown], "")
	}
	lines := strings.Split(s, "\n")
	if n = max(1, n); len(lines) > n || cut > 0 {
		if len(lines) >= n {
			lines = lines[:n-1]
		}
		lines = append(lines, m.pal.Dim(fmt.Sprintf("… (%s of arguments in all)", size(len(b)))))
	}
	return lines
}

// waited says how long a call has waited: "12s", "3m".
func (m *Model) waited(since time.Time) string {
	d := m.opts.Now().Sub(since)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(0, int(d.Seconds())))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%dh", int(d.Hours()))
}

// errNoApprovals is a local panel's answer to 5.
var errNoApprovals = errors.New("calls wait for approver groups on a gateway: see them with switchboard panel --attach URL")
