package gateway

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

	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/proxy"
)

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
		if !filepath.IsAbs(path) {
			// No home directory: there is no state directory to keep it
			// in, and a relative path would write wherever the process runs.
			e.log.Warn("no audit trail: the state directory is unknown (set HOME, or Options.AuditPath)")
			return
		}
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

// send sends a call the session resolved, once, if it is not quarantined
// and the approval rules let it, and records it in the audit trail.
func (s *Session) send(ctx context.Context, ref proxy.ToolRef, t *mcp.Tool, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	rec, err := s.admit(ctx, ref, t, params)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res, err := s.e.poolCall(ctx, ref.Server, params)
	s.finish(rec, time.Since(start), res, err)
	return res, err
}

// admit decides whether a call may be sent, and returns its audit record
// so far; a call that may not is recorded, and the error says why.
func (s *Session) admit(ctx context.Context, ref proxy.ToolRef, t *mcp.Tool, params *mcp.CallToolParams) (*policy.Record, error) {
	rec := &policy.Record{Session: s.auditID(), Event: policy.EventCall, Server: ref.Server, Tool: ref.Name, Decision: "allowed"}
	if s.e.pol.audit != nil {
		args, _ := json.Marshal(params.Arguments)
		rec.ArgsBytes = len(args)
		if s.e.pol.audit.Payloads() {
			rec.Args = args
		}
	}
	var err error
	if q := s.e.quarantined(ctx, ref.Server)[ref.Name]; q != nil {
		err = &QuarantinedError{Q: q}
		rec.Decision = "quarantined"
	} else if err = s.gate(ctx, ref, t, params.Arguments); err != nil {
		rec.Decision = "denied"
	}
	if err != nil {
		rec.Outcome, rec.Why = "not-sent", err.Error()
		s.e.record(*rec)
		return nil, err
	}
	return rec, nil
}

// finish records a call that was sent.
func (s *Session) finish(rec *policy.Record, took time.Duration, res *mcp.CallToolResult, err error) {
	if s.e.pol.audit == nil {
		return
	}
	rec.DurationMs = ms(took)
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
	if res != nil {
		rec.ResultBytes = resultSize(res)
		if s.e.pol.audit.Payloads() {
			rec.Result, _ = json.Marshal(res)
		}
	}
	s.e.record(*rec)
}

// resultSize is the size of a result's content: its text and data, and its
// structured content as JSON. A result of megabytes is not encoded again
// only to be measured.
func resultSize(res *mcp.CallToolResult) int {
	n := 0
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			n += len(c.Text)
		case *mcp.ImageContent:
			n += len(c.Data)
		case *mcp.AudioContent:
			n += len(c.Data)
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				n += len(c.Resource.Text) + len(c.Resource.Blob)
			}
		}
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		n += len(b)
	}
	return n
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
