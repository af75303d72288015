package gateway

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/bound"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// These methods serve a gateway that exposes servers' own tools, resources
// and prompts besides the proxy tool (switchboard serve's direct tools and
// transparent mode). They take original names and pass requests on as they
// are; only what the engine must bound is bounded.

// Usable returns the names of the servers that may be connected.
func (e *Engine) Usable() []string { return e.searchable("") }

// Entry returns what a server offers, from the catalog when it knows the
// server's current definition and the server is connected, else by
// connecting and listing it (which also updates the catalog). Its tools
// are as an agent may see them: a quarantined tool has the definition the
// user approved, and one never approved is left out (docs/policy.md).
func (e *Engine) Entry(ctx context.Context, server string) (*catalog.Entry, error) {
	name, err := e.server(server)
	if err != nil {
		return nil, err
	}
	ent, err := e.entry(ctx, name)
	if err != nil {
		return nil, err
	}
	return e.view(ctx, ent), nil
}

// Cached returns the catalog's entry for a server without connecting,
// with its tools as Entry has them.
func (e *Engine) Cached(ctx context.Context, server string) (*catalog.Entry, bool) {
	s, ok := e.cfg.Server(server)
	if !ok {
		return nil, false
	}
	ent, ok := e.cached(ctx, s)
	if !ok {
		return nil, false
	}
	return e.view(ctx, ent), true
}

// CallTool calls a server's tool once with the whole request, _meta
// included, and returns the server's result as it came.
func (e *Engine) CallTool(ctx context.Context, server string, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return e.def.CallTool(ctx, server, params)
}

// Bound returns a tool result bounded as a whole, for a gateway's direct
// tools: its content is converted as the mcp tool converts it (binary
// content to spill files, structured content added as JSON text unless a
// text block holds it), then the text, the images and the structured
// content share settings.output in that order; what does not fit is
// spilled to files named in the text. The structured content is dropped
// when it does not fit (the text, or its one spill file, holds it), so
// such a tool must not advertise an output schema.
func (e *Engine) Bound(what string, res *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	conv, err := e.spill.Convert(what, res.Content, res.StructuredContent)
	if err != nil {
		return nil, err
	}
	v, err := e.spill.Fit(what, bound.Visible{Text: conv.Text, Images: conv.Images, Structured: res.StructuredContent, StructuredInText: true, Spills: conv.Spills}, 0)
	if err != nil {
		return nil, err
	}
	out := &mcp.CallToolResult{IsError: res.IsError, StructuredContent: v.Structured, Meta: res.Meta}
	out.Content = append(out.Content, &mcp.TextContent{Text: v.Text})
	for _, img := range v.Images {
		out.Content = append(out.Content, img)
	}
	return out, nil
}

// Fits reports whether a tool result can be passed on as it came, for a
// gateway that passes results through when it can (transparent mode): it
// is within settings.output, text, binary content and structured content
// together, and its structured content, if any, is repeated in a text
// block, so that a client that shows only the content shows it too.
func (e *Engine) Fits(res *mcp.CallToolResult) bool {
	if !e.spill.Limits().Within(res.Content, res.StructuredContent) {
		return false
	}
	return res.StructuredContent == nil || bound.HoldsStructured(res.Content, res.StructuredContent)
}

// FitsRaw is Fits for a result on the fast path (see Session.CallToolRaw),
// which has text only.
func (e *Engine) FitsRaw(raw *upstream.RawResult) bool {
	return e.spill.Limits().WithinText(raw.TextBytes, raw.TextLines)
}

// ReadResource reads a resource of a server by its URI, as it came.
func (e *Engine) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	name, err := e.server(server)
	if err != nil {
		return nil, err
	}
	return e.pool.ReadResource(ctx, name, uri)
}

// GetPrompt gets a server's prompt, as it came.
func (e *Engine) GetPrompt(ctx context.Context, server, prompt string, args map[string]string) (*mcp.GetPromptResult, error) {
	name, err := e.server(server)
	if err != nil {
		return nil, err
	}
	return e.pool.GetPrompt(ctx, name, prompt, args)
}

// Complete passes a completion request on to a server.
func (e *Engine) Complete(ctx context.Context, server string, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	name, err := e.server(server)
	if err != nil {
		return nil, err
	}
	return e.pool.Complete(ctx, name, params)
}

// SetLoggingLevel asks a server to send log messages at level and above,
// now and after every reconnection; they arrive at the LoggingMessageHandler
// of Options.Client.
func (e *Engine) SetLoggingLevel(ctx context.Context, server string, level mcp.LoggingLevel) error {
	name, err := e.server(server)
	if err != nil {
		return err
	}
	return e.pool.SetLoggingLevel(ctx, name, level)
}

// SubscribeResource subscribes to updates of a server's resource, now and after
// every reconnection; they arrive at the ResourceUpdatedHandler of
// Options.Client.
func (e *Engine) SubscribeResource(ctx context.Context, server, uri string) error {
	name, err := e.server(server)
	if err != nil {
		return err
	}
	return e.pool.Subscribe(ctx, name, uri)
}

// UnsubscribeResource ends a subscription made with SubscribeResource.
func (e *Engine) UnsubscribeResource(ctx context.Context, server, uri string) error {
	name, err := e.server(server)
	if err != nil {
		return err
	}
	return e.pool.Unsubscribe(ctx, name, uri)
}
