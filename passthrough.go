package switchboard

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/catalog"
)

// These methods serve a gateway that exposes servers' own tools, resources
// and prompts besides the proxy tool (switchboard serve's direct tools and
// transparent mode). They take original names and pass requests on as they
// are; only what the engine must bound is bounded.

// Usable returns the names of the servers that may be connected.
func (e *Engine) Usable() []string { return e.searchable("") }

// Entry returns what a server offers, from the catalog when it knows the
// server's current definition and the server is connected, else by
// connecting and listing it (which also updates the catalog).
func (e *Engine) Entry(ctx context.Context, server string) (*catalog.Entry, error) {
	name, err := e.server(server)
	if err != nil {
		return nil, err
	}
	return e.entry(ctx, name)
}

// Cached returns the catalog's entry for a server without connecting.
func (e *Engine) Cached(ctx context.Context, server string) (*catalog.Entry, bool) {
	s, ok := e.cfg.Server(server)
	if !ok {
		return nil, false
	}
	return e.cached(ctx, s)
}

// CallTool calls a server's tool once with the whole request, _meta
// included, and returns the server's result as it came.
func (e *Engine) CallTool(ctx context.Context, server string, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	name, err := e.server(server)
	if err != nil {
		return nil, err
	}
	return e.pool.Call(ctx, name, params)
}

// Bound returns a tool result whose text fits the output limits: larger
// text and binary content are spilled to files named in the text. The
// structured content is kept as it came.
func (e *Engine) Bound(what string, res *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	conv, err := e.spill.Convert(what, res.Content, nil)
	if err != nil {
		return nil, err
	}
	out := &mcp.CallToolResult{IsError: res.IsError, StructuredContent: res.StructuredContent, Meta: res.Meta}
	out.Content = append(out.Content, &mcp.TextContent{Text: conv.Text})
	for _, img := range conv.Images {
		out.Content = append(out.Content, img)
	}
	return out, nil
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

type progressKey struct{}

// WithProgressToken returns a context whose proxy tool call asks the
// server for progress notifications under token.
func WithProgressToken(ctx context.Context, token any) context.Context {
	return context.WithValue(ctx, progressKey{}, token)
}

func progressToken(ctx context.Context) any { return ctx.Value(progressKey{}) }
