package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/policy"
)

// CallToolRaw is CallTool on the fast path (see upstream.Pool.CallToolRaw)
// for a call of a tool with arguments (a JSON object, or nil) and nothing
// else: no _meta. A result go-sdk would pass on unchanged comes back as the
// server wrote it (raw); any other, decoded (res). The call is audited and
// reported (Options.OnCall) as CallTool's is.
//
// It returns upstream.ErrNoFastPath, having done nothing, when the call
// needs what only CallTool does: an approval rule applies to the server,
// the tool is quarantined (CallTool says why it is not sent), the tool
// declares an output schema (CallTool holds its result to it), or the
// connection cannot take it.
func (s *Session) CallToolRaw(ctx context.Context, server, tool string, args json.RawMessage) (raw *upstream.RawResult, res *mcp.CallToolResult, err error) {
	name, err := s.e.server(server)
	if err != nil {
		return nil, nil, err
	}
	if err := s.allowed(name, tool); err != nil {
		return nil, nil, err
	}
	def, _ := s.e.cfg.Server(name)
	if s.e.cfg.ApprovalRule(def).Set() {
		return nil, nil, upstream.ErrNoFastPath
	}
	if st, err := s.e.livePins(ctx, name); err != nil || st.quarantine(tool) != nil {
		return nil, nil, upstream.ErrNoFastPath // CallTool says why
	}
	if t := s.e.listedTool(name, tool); t != nil && t.OutputSchema != nil {
		return nil, nil, upstream.ErrNoFastPath // CallTool checks the result against it
	}
	start := time.Now()
	raw, res, err = s.e.pool.CallToolRaw(ctx, name, tool, args)
	if err == upstream.ErrNoFastPath {
		return nil, nil, err
	}
	took := time.Since(start)
	if s.e.opts.OnCall == nil && s.e.pol.audit == nil {
		return raw, res, err
	}
	// As CallTool measures them: the arguments as go-sdk would send them.
	var argsJSON []byte
	if len(args) > 0 {
		argsJSON, _ = json.Marshal(args)
	} else {
		argsJSON = []byte("{}")
	}
	if s.e.opts.OnCall != nil {
		resultBytes, isError := 0, false
		switch {
		case raw != nil:
			resultBytes, isError = len(raw.Result), raw.IsError
		case res != nil:
			resultBytes, isError = jsonSize(res), res.IsError
		}
		s.e.reportCall(ctx, name, tool, start, len(argsJSON), resultBytes, isError, err)
	}
	if s.e.pol.audit == nil {
		return raw, res, err
	}
	rec := &policy.Record{Event: policy.EventCall, Server: name, Tool: tool, Decision: "allowed", ArgsBytes: len(argsJSON)}
	if s.e.payloads() {
		rec.Args = argsJSON
	}
	if raw == nil {
		s.finish(ctx, rec, took, res, err)
		return raw, res, err
	}
	rec.DurationMs = ms(took)
	rec.Outcome = "ok"
	if raw.IsError {
		rec.Outcome = "tool-error"
	}
	rec.ResultBytes = raw.TextBytes
	if s.e.payloads() {
		var b bytes.Buffer
		if json.Compact(&b, raw.Result) == nil {
			rec.Result = b.Bytes()
		}
	}
	s.e.record(ctx, s, *rec)
	return raw, res, err
}
