package testserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Typed is the mode of a go-sdk server whose tool "typed" takes a
// parameter of every JSON type, "message" required, and answers with the
// arguments it got, as JSON; go-sdk validates them against the schema, as
// a strict server does. It also has a resource and a resource template.
const Typed = "typed"

type typedArgs struct {
	Message string         `json:"message" jsonschema:"what to say"`
	Count   int            `json:"count,omitempty"`
	Ratio   float64        `json:"ratio,omitempty"`
	Loud    bool           `json:"loud,omitempty"`
	Tags    []string       `json:"tags,omitempty"`
	Meta    map[string]any `json:"meta,omitempty"`
}

func serveTyped() error {
	s := mcp.NewServer(&mcp.Implementation{Name: "typed", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "typed", Description: "Answers with the arguments it got, as JSON."},
		func(_ context.Context, _ *mcp.CallToolRequest, a typedArgs) (*mcp.CallToolResult, any, error) {
			b, err := json.Marshal(a)
			if err != nil {
				return nil, nil, err
			}
			return text(string(b)), nil, nil
		})
	s.AddResource(&mcp.Resource{URI: "typed://static", Name: "static", MIMEType: "text/plain"},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "static text"}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "typed://item/{id}", Name: "item", MIMEType: "text/plain"},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "item " + r.Params.URI}}}, nil
		})
	return s.Run(context.Background(), &mcp.StdioTransport{})
}
