package mcptest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ManyServer returns a go-sdk server with the given number of tools
// ("tool-00000", …, listed in pages of 1,000, the SDK's default), one
// resource and one prompt: a large catalog for tests that count list
// requests.
func ManyServer(tools int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "1"}, nil)
	for i := range tools {
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool-%05d", i), InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	s.AddResource(&mcp.Resource{URI: "test://one", Name: "one"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	return s
}

// RootsServer serves, over Streamable HTTP in process until the test ends,
// a go-sdk server that lists its client's roots when told they changed and
// sends each list on changed. Its tool "roots" answers with the client's
// roots, one a line, or "no roots capability" when the client did not
// declare roots.
func RootsServer(t testing.TB, changed chan<- []string) *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "roots", Version: "1"}, &mcp.ServerOptions{
		RootsListChangedHandler: func(ctx context.Context, req *mcp.RootsListChangedRequest) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				t.Errorf("listing roots after list_changed: %v", err)
				return
			}
			changed <- RootURIs(res.Roots)
		},
	})
	mcp.AddTool(s, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if p := req.Session.InitializeParams(); p != nil && (p.Capabilities == nil || p.Capabilities.RootsV2 == nil) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no roots capability"}}}, nil, nil
		}
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(RootURIs(res.Roots), "\n")}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts
}

// RootURIs returns the roots' URIs, never nil.
func RootURIs(roots []*mcp.Root) []string {
	out := []string{}
	for _, r := range roots {
		out = append(out, r.URI)
	}
	return out
}
