package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/script"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// Code mode: a script's inner calls are the session's own, made on the
// paths of the mcp tool's search, describe and call (resolve, the allow
// list, the pins and quarantine, the approval rules asked through the
// context's approver, progress, the audit trail), in the context of the
// call that runs the script: its cancellation, deadline and routing
// toward its client reach every inner call. What the audit trail records
// of them names the script by its SHA-256.

type scriptKey struct{}

// withScript marks ctx as a script's, by its hash.
func withScript(ctx context.Context, sum string) context.Context {
	return context.WithValue(ctx, scriptKey{}, sum)
}

// scriptOf returns the hash of the script whose call ctx is, or "".
func scriptOf(ctx context.Context) string {
	s, _ := ctx.Value(scriptKey{}).(string)
	return s
}

// RunScript runs a code-mode script in the session (settings.scriptMode
// decides whether a face offers it; the library always may), within
// settings.scriptTimeoutMs and the runtime's bounds, and returns its
// answer bounded as any result.
func (s *Session) RunScript(ctx context.Context, src string) *proxy.Result {
	h := sha256.Sum256([]byte(src))
	sum := hex.EncodeToString(h[:])
	ctx = withScript(ctx, sum)
	a := script.Run(ctx, scriptHost{s}, src, &script.Options{Timeout: s.e.cfg.Settings.ScriptTimeout})
	info := proxy.ScriptInfo{SHA256: sum, Calls: a.Calls, Logs: a.Logs}
	if a.Err != nil {
		info.Error = &proxy.ScriptError{Code: a.Err.Code, Message: a.Err.Message, Line: a.Err.Line, Col: a.Err.Col}
	}
	return s.fit(proxy.Script(a.Value, info))
}

// scriptHost is a session as a script's tools reach it.
type scriptHost struct{ s *Session }

func (h scriptHost) Search(ctx context.Context, q script.Query) (any, error) {
	req := &proxy.Request{Action: proxy.ActionSearch, Query: q.Query, Server: q.Server, Limit: q.Limit, Offset: q.Offset, IncludeSchemas: true}
	if q.Limit > proxy.MaxLimit || q.Limit < 0 || q.Offset < 0 {
		return nil, &script.Error{Code: script.CodeInvalid, Message: fmt.Sprintf("tools.search: limit must be 1 to %d and offset 0 or more", proxy.MaxLimit)}
	}
	r := h.s.do(ctx, req)
	if r.IsError {
		return nil, &script.Error{Code: "search_failed", Message: r.Text}
	}
	d := r.Details
	out := map[string]any{"tools": d.Tools, "count": d.Count, "total": d.Total}
	if d.Search != nil && d.Search.Offset+d.Count < d.Total {
		out["nextOffset"] = d.Search.Offset + d.Count
	}
	if len(d.Failed) > 0 {
		out["failed"] = d.Failed
	}
	if d.Tools == nil {
		out["tools"] = []proxy.ToolInfo{}
	}
	return out, nil
}

func (h scriptHost) Describe(ctx context.Context, path, server string) (any, error) {
	if err := h.server(&server); err != nil {
		return nil, err
	}
	if _, _, err := h.s.e.resolve(ctx, path, server); err != nil {
		return nil, scriptError(err)
	}
	r := h.s.describe(ctx, &proxy.Request{Action: proxy.ActionDescribe, Name: path, Server: server, IncludeSchemas: true})
	if r.IsError || r.Details.Tool == nil {
		return nil, &script.Error{Code: "describe_failed", Message: r.Text}
	}
	t := r.Details.Tool
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	out["typescript"] = proxy.Declaration(t)
	return out, nil
}

func (h scriptHost) Call(ctx context.Context, path, server string, args map[string]any) (any, error) {
	if err := h.server(&server); err != nil {
		return nil, err
	}
	_, res, err := h.s.callNamed(ctx, path, server, args)
	if err != nil {
		return nil, scriptError(err)
	}
	if res.IsError {
		return res, &script.Error{Code: script.CodeToolError, Message: resultText(res, 2000)}
	}
	return res, nil
}

// server checks a server's name as the mcp tool does, and puts it as
// configured.
func (h scriptHost) server(name *string) error {
	if *name == "" {
		return nil
	}
	n, err := h.s.e.server(*name)
	if err != nil {
		return scriptError(err)
	}
	*name = n
	return nil
}

// scriptError gives an inner call's error the code a script can act on.
func scriptError(err error) error {
	var denied *policy.DeniedError
	var quarantined *QuarantinedError
	code := ""
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, proxy.ErrUnknownTool):
		code = "unknown_tool"
	case errors.Is(err, config.ErrUnknownServer):
		code = "unknown_server"
	case errors.As(err, &denied):
		code = "denied"
	case errors.As(err, &quarantined):
		code = "quarantined"
	case errors.Is(err, errNotAllowed):
		code = "not_allowed"
	default:
		code = script.CodeFailed
	}
	return &script.Error{Code: code, Message: err.Error()}
}

// resultText is a result's text content, cut to n bytes.
func resultText(res *mcp.CallToolResult, n int) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t.Text)
		}
	}
	s := b.String()
	if len(s) > n {
		s = s[:n] + "…"
	}
	if s == "" {
		s = "the tool reported an error"
	}
	return s
}
