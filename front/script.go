package front

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/proxy"
)

// addScriptTool registers the code-mode tool, mcpScript, beside the proxy
// tool: settings.scriptMode only (without it nothing here runs, and
// clients see the tools they saw before).
func (s *Server) addScriptTool() error {
	var schema jsonschema.Schema
	if err := json.Unmarshal(proxy.ScriptInputSchema, &schema); err != nil {
		return fmt.Errorf("the %s tool's schema: %w", proxy.ScriptToolName, err)
	}
	tool := &mcp.Tool{Name: proxy.ScriptToolName, Description: proxy.ScriptToolDescription, InputSchema: &schema}
	mcp.AddTool(s.mcp, tool, func(ctx context.Context, req *mcp.CallToolRequest, args json.RawMessage) (*mcp.CallToolResult, any, error) {
		tc := sdkCall(req, args)
		return s.callScript(ctx, &tc), nil, nil
	})
	return nil
}

// callScript runs a script through the call pipeline (pipeline.go), as a
// call of the proxy tool is: its client's engine session, routing toward
// its client, approvals asked of its client (each inner call that an
// approval rule covers asks, mid-script), metrics, span and log line.
// Cancelling the call cancels the script and its inner calls. A script is
// never suspended for a multi round-trip client: its approvals are asked
// while it runs.
func (s *Server) callScript(ctx context.Context, tc *toolCall) *mcp.CallToolResult {
	f := s.enter(ctx, tc, "script")
	defer f.leave()
	var r *proxy.Result
	if req, err := proxy.ParseScript(tc.args); err != nil {
		r = proxy.ErrorResult("script", "", err)
	} else {
		r = f.es.RunScript(s.approving(f.ctx, tc.ss), req.Script)
	}
	f.done("", r.IsError)
	s.observeProxy(f.ctx, tc, f.span, r, f.began)
	return r.MCP()
}
