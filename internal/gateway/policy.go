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

	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// enginePolicy is what the engine keeps for policy: the audit trail and
// the numbering of sessions in it.
type enginePolicy struct {
	audit    policy.Auditor // nil: no audit trail
	sessions atomic.Int64
	seq      atomic.Int64 // numbers the records of no session
	failures auditFailures

	pins    pinStore         // set by openPins
	pinsAt  string           // where the pins are, for errors
	pinFile *catalog.PinFile // pins' own file, closed with the engine; nil with the shared store

	mu        sync.Mutex
	pinStates map[string]*pinState // by server (pins.go)
}

// openPolicy opens the audit trail: a table of the shared store with
// Options.Store, else the file.
func (e *Engine) openPolicy(ctx context.Context) error {
	if e.opts.Passive {
		return nil // status only: it calls nothing
	}
	a := e.cfg.Settings.Audit
	if e.opts.Store != nil {
		pg, err := policy.OpenPostgresAudit(ctx, e.opts.Store, &policy.PostgresOptions{Payloads: a.Payloads})
		if err != nil {
			return err
		}
		e.pol.audit = pg
		if e.pending.shared, err = openSharedApprovals(ctx, e.opts.Store, e.opts.StoreKey); err != nil {
			return err
		}
		return nil
	}
	path := e.opts.AuditPath
	if path == "" {
		path = filepath.Join(e.cfg.Dirs.StateDir(), policy.AuditFile)
		if !filepath.IsAbs(path) {
			// No home directory: there is no state directory to keep it
			// in, and a relative path would write wherever the process runs.
			e.log.Warn("no audit trail: the state directory is unknown (set HOME, or Options.AuditPath)")
			return nil
		}
	}
	e.pol.audit = policy.OpenAudit(path, a.MaxBytes, a.Payloads)
	return nil
}

// payloads reports whether audit records keep arguments and results.
func (e *Engine) payloads() bool { return e.pol.audit != nil && e.pol.audit.Payloads() }

// sessionPolicy is what a session keeps for policy: the approvals given for
// it, its name in the audit trail and the number of its last record there.
type sessionPolicy struct {
	grants policy.Grants
	once   sync.Once
	id     string
	seq    atomic.Int64
}

func (s *Session) auditID() string {
	s.pol.once.Do(func() {
		s.pol.id = fmt.Sprintf("%d-%d", os.Getpid(), s.e.pol.sessions.Add(1))
	})
	return s.pol.id
}

// record writes r to the audit trail as the next record of s (nil: of
// none). A record that is not written is counted (AuditFailures) and
// logged with its cause, at most once a minute (see auditFailures.note).
// The call it records goes on (see docs/policy.md).
func (e *Engine) record(ctx context.Context, s *Session, r policy.Record) {
	if e.pol.audit == nil {
		return
	}
	r.Script = scriptOf(ctx)
	if s != nil {
		r.Session, r.Seq = s.auditID(), s.pol.seq.Add(1)
		who := s.principal()
		r.User, r.ClientID, r.Client = who.User, who.ClientID, who.Client
	} else {
		r.Seq = e.pol.seq.Add(1)
	}
	// What a server or a call put there may repeat a secret.
	r.Tool, r.Why = e.redact.String(r.Tool), e.redact.String(r.Why)
	r.Args, r.Result = e.redact.Bytes(r.Args), e.redact.Bytes(r.Result)
	err := e.pol.audit.Write(ctx, r)
	switch n, what := e.pol.failures.note(err, time.Now()); what {
	case auditFailed:
		e.log.Warn("audit trail: a record was not written", "err", err, "records-lost", n)
	case auditRecovered:
		e.log.Warn("audit trail: records are written again", "records-lost", n)
	}
}

// AuditFailures returns how many audit records this engine failed to
// write, for metrics.
func (e *Engine) AuditFailures() uint64 { return e.pol.failures.total.Load() }

// auditWarnEvery bounds how often failed audit writes are logged.
const auditWarnEvery = time.Minute

// auditFailures counts failed audit writes and decides which to log.
type auditFailures struct {
	total   atomic.Uint64
	pending atomic.Bool // unwarned > 0

	mu       sync.Mutex
	lastWarn time.Time // when a failure was last logged
	unwarned uint64    // failures since then
}

// What note says to log.
const (
	auditQuiet     = iota
	auditFailed    // this failure, and n in all since the last warning
	auditRecovered // a write worked after n failures not logged yet
)

// note counts the outcome of a write and says what to log, and how many
// failures that stands for: at most one warning every auditWarnEvery, the
// first failure after a quiet spell at once, with its cause; failures not
// logged yet are logged with the next failure, or the next success, once
// auditWarnEvery has passed. A success after a success costs an atomic
// load.
func (f *auditFailures) note(err error, now time.Time) (n uint64, what int) {
	if err == nil && !f.pending.Load() {
		return 0, auditQuiet
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	what = auditRecovered
	if err != nil {
		f.total.Add(1)
		f.unwarned++
		what = auditFailed
	}
	f.pending.Store(f.unwarned > 0)
	if f.unwarned == 0 || !f.lastWarn.IsZero() && now.Sub(f.lastWarn) < auditWarnEvery {
		return 0, auditQuiet
	}
	f.lastWarn = now
	n, f.unwarned = f.unwarned, 0
	f.pending.Store(false)
	return n, what
}

func (e *Engine) auditDecision(ctx context.Context, s *Session, req *policy.Request, ans policy.Answer, approver string, took time.Duration) {
	e.record(ctx, s, policy.Record{Event: policy.EventApproval, Server: req.Server, Tool: req.Tool,
		Decision: string(ans.Decision), Rule: req.Rule.Where(), Why: ans.Why, DurationMs: ms(took), Approver: approver})
}

// send sends a call the session resolved, once, if it is not quarantined
// and the approval rules let it, and records it in the audit trail.
func (s *Session) send(ctx context.Context, ref proxy.ToolRef, t *mcp.Tool, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	rec, err := s.admit(ctx, ref, t, params)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res, err := s.e.poolCall(ctx, ref.Server, t, params)
	s.finish(ctx, rec, time.Since(start), res, err)
	return res, err
}

// admit decides whether a call may be sent, and returns its audit record
// so far; a call that may not is recorded, and the error says why.
func (s *Session) admit(ctx context.Context, ref proxy.ToolRef, t *mcp.Tool, params *mcp.CallToolParams) (*policy.Record, error) {
	rec := &policy.Record{Event: policy.EventCall, Server: ref.Server, Tool: ref.Name, Decision: "allowed"}
	if s.e.pol.audit != nil {
		args, _ := argsJSON(params.Arguments)
		rec.ArgsBytes = len(args)
		if s.e.payloads() {
			rec.Args = args
		}
	}
	// The approval rules judge the definition the pins vouch for: a tool
	// whose annotations changed is quarantined, not judged by them.
	start := time.Now()
	st, err := s.e.livePins(ctx, ref.Server)
	if err != nil {
		// The server could not be reached to list it: a call that fails
		// to connect, reported and recorded as one.
		if s.e.opts.OnCall != nil {
			s.e.reportCall(ctx, ref.Server, ref.Name, start, jsonSize(params.Arguments), 0, false, err)
		}
		rec.Outcome, rec.Why = "error", err.Error() // a listing's error: no arguments in it
		s.e.record(ctx, s, *rec)
		return nil, err
	}
	if q := st.quarantine(ref.Name); q != nil {
		err = &QuarantinedError{Q: q}
		rec.Decision = "quarantined"
	} else if err = s.gate(ctx, ref, st, params.Arguments); err != nil {
		rec.Decision = "denied"
	}
	if err != nil {
		rec.Outcome, rec.Why = "not-sent", err.Error()
		s.e.record(ctx, s, *rec)
		return nil, err
	}
	return rec, nil
}

// finish records a call that was sent.
func (s *Session) finish(ctx context.Context, rec *policy.Record, took time.Duration, res *mcp.CallToolResult, err error) {
	if s.e.pol.audit == nil {
		return
	}
	rec.DurationMs = ms(took)
	switch {
	case err != nil:
		// The error may quote the arguments (a validation error does).
		rec.Outcome, rec.Why = "error", errorKind(err)
		if s.e.payloads() {
			rec.Why = err.Error()
		}
	case res.IsError:
		rec.Outcome = "tool-error"
	default:
		rec.Outcome = "ok"
	}
	if res != nil {
		rec.ResultBytes = resultSize(res)
		if s.e.payloads() {
			rec.Result, _ = json.Marshal(res)
		}
	}
	s.e.record(ctx, s, *rec)
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
