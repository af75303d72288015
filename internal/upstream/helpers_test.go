package upstream_test

import "github.com/modelcontextprotocol/go-sdk/mcp"

func firstText(content []mcp.Content) string {
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}
