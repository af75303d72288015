package mcptest

import (
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Text returns the text of a tool result's text blocks, joined; "" for a
// nil result.
func Text(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
