package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveMeta serves the tool "meta", which answers with the _meta of its
// request (where a client passes trace context), and notes each call on
// stderr.
func serveMeta() error {
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver-meta", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "meta", Description: "Answers with the request's _meta."},
		func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "meta: called")
			b, err := json.Marshal(req.Params.Meta)
			if err != nil {
				return nil, nil, err
			}
			return text(string(b)), nil, nil
		})
	return s.Run(context.Background(), &mcp.StdioTransport{})
}
