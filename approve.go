package switchboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/catalog"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// gate decides whether a call of a tool may be sent: when the server's
// approval rule covers it and the session has not allowed it already, it
// asks (the context's approver, else Options.Approver) and returns a
// *policy.DeniedError unless the answer allows it. t is the tool's
// definition from the catalog, nil when unknown: without annotations a
// tool counts as destructive. A call no rule covers costs one lookup of the
// server's definition.
func (s *Session) gate(ctx context.Context, ref proxy.ToolRef, t *mcp.Tool, args any) error {
	def, _ := s.e.cfg.Server(ref.Server)
	rule := s.e.cfg.ApprovalRule(def)
	if !rule.Set() {
		return nil
	}
	var ann *mcp.ToolAnnotations
	if t != nil {
		ann = t.Annotations
	}
	if !policy.Needs(rule, ref.Name, ref.Prefixed(), ann) || s.pol.grants.Allowed(ref.Server, ref.Name) {
		return nil
	}
	approve := policy.ApproverFrom(ctx)
	if approve == nil {
		approve = s.e.opts.Approver
	}
	req := &policy.Request{Server: ref.Server, Tool: ref.Name, Prefixed: ref.Prefixed(), Args: args, Rule: rule}
	start := time.Now()
	ans := policy.Ask(ctx, approve, req, def.RequestTimeout)
	s.e.auditDecision(s, req, ans, time.Since(start))
	if !ans.Decision.Allows() {
		return &policy.DeniedError{Request: req, Why: ans.Why}
	}
	if ans.Decision == policy.AllowSession {
		s.pol.grants.Grant(ref.Server, ref.Name)
	}
	return nil
}

// CallTool calls a server's tool once with the whole request, _meta
// included, in this session: the approval rules apply, and what the
// session allowed for itself counts. It returns the server's result as it
// came, or a *policy.DeniedError when the call was not approved.
func (s *Session) CallTool(ctx context.Context, server string, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	name, err := s.e.server(server)
	if err != nil {
		return nil, err
	}
	ref := proxy.ToolRef{Server: name, Name: params.Name}
	return s.send(ctx, ref, s.e.tool(ctx, ref), params)
}

// tool returns a tool's definition from the catalog, or nil.
func (e *Engine) tool(ctx context.Context, ref proxy.ToolRef) *mcp.Tool {
	def, _ := e.cfg.Server(ref.Server)
	if !e.cfg.ApprovalRule(def).Set() {
		return nil // nothing to decide with it
	}
	ent, ok := e.cached(ctx, def)
	if !ok {
		return nil
	}
	for _, t := range ent.Tools {
		if t.Name == ref.Name {
			return t
		}
	}
	return nil
}

// enginePolicy is what the engine keeps for policy: the audit trail and
// the numbering of sessions in it.
type enginePolicy struct {
	audit    *policy.Auditor
	sessions atomic.Int64

	mu   sync.Mutex
	pins map[string]*pinState // by server (pins.go)
}

func (e *Engine) openPolicy() {
	if e.opts.Passive {
		return // status only: it calls nothing
	}
	path := e.opts.AuditPath
	if path == "" {
		path = filepath.Join(e.cfg.Dirs.StateDir(), policy.AuditFile)
	}
	a := e.cfg.Settings.Audit
	e.pol.audit = policy.OpenAudit(path, a.MaxBytes, a.Payloads)
}

// sessionPolicy is what a session keeps for policy: the approvals given for
// it, and its name in the audit trail.
type sessionPolicy struct {
	grants policy.Grants
	once   sync.Once
	id     string
}

func (s *Session) auditID() string {
	s.pol.once.Do(func() {
		s.pol.id = fmt.Sprintf("%d-%d", os.Getpid(), s.e.pol.sessions.Add(1))
	})
	return s.pol.id
}

func (e *Engine) record(r policy.Record) {
	if err := e.pol.audit.Write(r); err != nil {
		e.log.Warn("audit trail", "err", err)
	}
}

func (e *Engine) auditDecision(s *Session, req *policy.Request, ans policy.Answer, took time.Duration) {
	e.record(policy.Record{Session: s.auditID(), Event: policy.EventApproval, Server: req.Server, Tool: req.Tool,
		Decision: string(ans.Decision), Rule: req.Rule.Where(), Why: ans.Why, DurationMs: ms(took)})
}

// send sends a call the session resolved, once, if the approval rules let
// it, and records it in the audit trail.
func (s *Session) send(ctx context.Context, ref proxy.ToolRef, t *mcp.Tool, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	rec := policy.Record{Session: s.auditID(), Event: policy.EventCall, Server: ref.Server, Tool: ref.Name, Decision: "allowed"}
	if s.e.pol.audit != nil {
		args, _ := json.Marshal(params.Arguments)
		rec.ArgsBytes = len(args)
		if s.e.pol.audit.Payloads() {
			rec.Args = args
		}
	}
	if q := s.e.quarantined(ctx, ref.Server)[ref.Name]; q != nil {
		err := &QuarantinedError{Q: q}
		rec.Decision, rec.Outcome, rec.Why = "quarantined", "not-sent", err.Error()
		s.e.record(rec)
		return nil, err
	}
	if err := s.gate(ctx, ref, t, params.Arguments); err != nil {
		rec.Decision, rec.Outcome, rec.Why = "denied", "not-sent", err.Error()
		s.e.record(rec)
		return nil, err
	}
	start := time.Now()
	res, err := s.e.pool.Call(ctx, ref.Server, params)
	rec.DurationMs = ms(time.Since(start))
	switch {
	case err != nil:
		// The error may quote the arguments (a validation error does).
		rec.Outcome, rec.Why = "error", errorKind(err)
		if s.e.pol.audit.Payloads() {
			rec.Why = err.Error()
		}
	case res.IsError:
		rec.Outcome = "tool-error"
	default:
		rec.Outcome = "ok"
	}
	if res != nil && s.e.pol.audit != nil {
		out, _ := json.Marshal(res)
		rec.ResultBytes = len(out)
		if s.e.pol.audit.Payloads() {
			rec.Result = out
		}
	}
	s.e.record(rec)
	return res, err
}

// errorKind names what became of a call that failed, without the error's
// text.
func errorKind(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return "failed (the error is recorded with settings.audit.payloads)"
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

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
