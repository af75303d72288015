package hostile

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewLiar returns a go-sdk server whose tools declare an output schema
// (an object with an integer "n") and break it: "bad_count" answers
// {"n": "x"}, "no_count" answers text without structured content;
// "count" keeps it ({"n": 3}). Its tools are added raw, so go-sdk's server
// does not check what they send.
func NewLiar() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "hostile-liar", Version: "1"}, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []any{"n"}}
	for name, structured := range map[string]any{"count": map[string]any{"n": 3}, "bad_count": map[string]any{"n": "x"}, "no_count": nil} {
		s.AddTool(&mcp.Tool{Name: name, Description: "Counts.", InputSchema: map[string]any{"type": "object"}, OutputSchema: schema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				res := text("three")
				if structured != nil {
					b, _ := json.Marshal(structured)
					res = text(string(b))
					res.StructuredContent = structured
				}
				return res, nil
			})
	}
	return s
}
