package gateway

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// gate decides whether a call of a tool may be sent: when the server's
// approval rule covers it and the session has not allowed it already, it
// asks (the context's approver, else Options.Approver) and returns a
// *policy.DeniedError unless the answer allows it. The tool's annotations
// are those of the definition st (nil: none known) vouches for: the
// approved one while pins are on (see pinState.tool); without annotations
// a tool counts as destructive. A call no rule covers costs one lookup of
// the server's definition.
func (s *Session) gate(ctx context.Context, ref proxy.ToolRef, st *pinState, args any) error {
	def, _ := s.e.cfg.Server(ref.Server)
	rule := s.e.cfg.ApprovalRule(def)
	s.mu.Lock()
	ruled := s.ruled
	s.mu.Unlock()
	var groupRule config.Approval
	if ruled != nil {
		groupRule, _ = ruled(ref.Server, ref.Name)
	}
	if !rule.Set() && !groupRule.Set() {
		return nil
	}
	var ann *mcp.ToolAnnotations
	if t := st.tool(ref.Name); t != nil {
		ann = t.Annotations
	}
	// The server's rule first; where it asks nothing, the user's groups'.
	if !rule.Set() || !policy.Needs(rule, ref.Name, ref.Prefixed(), ann) {
		rule = groupRule
	}
	if !rule.Set() || !policy.Needs(rule, ref.Name, ref.Prefixed(), ann) || s.pol.grants.Allowed(ref.Server, ref.Name) {
		return nil
	}
	approve := policy.ApproverFrom(ctx)
	if approve == nil {
		approve = s.e.opts.Approver
	}
	by := func() string { return "" }
	if len(rule.Approvers) > 0 {
		// A member of the rule's approver groups decides, over the admin
		// API, not the caller.
		approve, by = s.e.groupApprover(s.principal().User)
	}
	req := &policy.Request{Server: ref.Server, Tool: ref.Name, Prefixed: ref.Prefixed(), Args: args, Rule: rule}
	start := time.Now()
	ans := policy.Ask(ctx, approve, req, def.RequestTimeout)
	s.e.auditDecision(ctx, s, req, ans, by(), time.Since(start))
	if !ans.Decision.Allows() {
		return &policy.DeniedError{Request: req, Why: ans.Why, Unasked: ans.Unasked}
	}
	if ans.Decision == policy.AllowSession {
		s.pol.grants.Grant(ref.Server, ref.Name)
	}
	return nil
}

// CallTool calls a server's tool once with the whole request, _meta
// included, in this session: the session's allow list (AllowOnly) and the
// approval rules apply, and what the session allowed for itself counts.
// It returns the server's result as it
// came, or a *policy.DeniedError when the call was not approved.
func (s *Session) CallTool(ctx context.Context, server string, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	name, err := s.e.server(server)
	if err != nil {
		return nil, err
	}
	if err := s.allowed(name, params.Name); err != nil {
		return nil, err
	}
	ref := proxy.ToolRef{Server: name, Name: params.Name}
	if params.GetProgressToken() == nil {
		// A caller that asked for progress (WithProgress: a task's
		// status, the CLI's line) gets it as the mcp tool's call does.
		tok, stop := s.e.progress.start(ctx)
		defer stop()
		if tok != nil {
			cp := *params
			cp.Meta = maps.Clone(params.Meta)
			cp.SetProgressToken(tok)
			params = &cp
		}
	}
	return s.send(ctx, ref, s.e.tool(ctx, ref), params)
}

// tool returns a tool's definition as its pins vouch for it (see
// pinState.tool), or nil.
func (e *Engine) tool(ctx context.Context, ref proxy.ToolRef) *mcp.Tool {
	def, _ := e.cfg.Server(ref.Server)
	if !e.cfg.ApprovalRule(def).Set() {
		return nil // nothing to decide with it
	}
	return e.pinned(ctx, ref.Server).tool(ref.Name)
}

// approveWarnings says which globs of a server's approval rule match none
// of its tools (as the catalog has them): such a glob asks for nothing,
// which is most likely a mistake.
func (e *Engine) approveWarnings(server string, ent *catalog.Entry) []string {
	def, _ := e.cfg.Server(server)
	rule := e.cfg.ApprovalRule(def)
	if rule.Mode != config.ApproveTools || ent == nil {
		return nil
	}
	names := make([]string, len(ent.Tools))
	for i, t := range ent.Tools {
		names[i] = t.Name
	}
	var out []string
	for _, g := range policy.Unmatched(rule, names, func(t string) string { return proxy.ToolRef{Server: server, Name: t}.Prefixed() }) {
		out = append(out, fmt.Sprintf("%s: the glob %q matches none of the tools of %q, so it asks for nothing", rule.Where(), g, server))
	}
	return out
}

// A RuleFor returns the approval rule the user's groups put on a call of
// a server's tool (config.Identity.ApprovalFor), and whether there is one.
type RuleFor func(server, tool string) (config.Approval, bool)

// ApproveAlso gives the session the approval rules of its user's groups,
// which apply where the server's own rule asks nothing. It replaces an
// earlier one; nil is none.
func (s *Session) ApproveAlso(f RuleFor) {
	s.mu.Lock()
	s.ruled = f
	s.mu.Unlock()
}
