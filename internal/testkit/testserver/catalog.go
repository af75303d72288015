package testserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Catalog is the mode of a go-sdk server whose tools have the names and
// descriptions search must cope with: snake_case, CamelCase and kebab-case
// names, C++, quotes and Chinese text.
const Catalog = "catalog"

// CatalogTools are the tools of the Catalog mode, by name: their descriptions.
var CatalogTools = map[string]string{
	"issue_create":       "Open a new issue in a repository.",
	"issue_list":         "List the issues of a repository.",
	"GitHubSearch":       "Search GitHub for code, issues and users.",
	"resolve-library-id": "Resolves a package name to a Context7 library ID.",
	"get-library-docs":   "Fetches up-to-date documentation for a library.",
	"compile_cpp":        "Compile C++ sources with clang.",
	"file_search":        "按名称搜索文件，返回匹配的路径列表",
	"quote_reply":        `Reply to a message with the original text "quoted".`,
	"get_forecast":       "Get the weather forecast for a city.",
}

// serveCatalog serves CatalogTools over stdio; each answers "called NAME".
func serveCatalog() error {
	s := mcp.NewServer(&mcp.Implementation{Name: "catalog", Version: "1"}, nil)
	for name, desc := range CatalogTools {
		t := &mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query": map[string]any{"type": "string", "description": "what to look for"},
			},
		}}
		if name == "file_search" {
			t.Title = "文件搜索"
		}
		s.AddTool(t, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("called " + name), nil
		})
	}
	return s.Run(context.Background(), &mcp.StdioTransport{})
}
