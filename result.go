package switchboard

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/bound"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// Result is what one operation returns: text for the model (the same text
// the CLI prints), images that pass through, and structured details for
// programs. The text and the details say the same thing. The three
// together are within settings.output, plus the notes that name spill
// files (see Session.fit).
type Result struct {
	Text    string
	Images  []*mcp.ImageContent
	IsError bool
	Details Details

	name string // what the result's spill files are named after
}

// Details is the machine-readable side of a result, also printed by the
// CLI's --json. Fields are only ever added to.
type Details struct {
	Operation string         `json:"operation"`
	Server    string         `json:"server,omitempty"`
	IsError   bool           `json:"isError"`
	Error     string         `json:"error,omitempty"`
	Count     int            `json:"count"`
	Total     int            `json:"total,omitempty"`
	Spills    []bound.Spill  `json:"spills,omitempty"`
	Servers   []ServerStatus `json:"servers,omitempty"`
	Tools     []ToolInfo     `json:"tools,omitempty"`
	Tool      *ToolDetail    `json:"tool,omitempty"`
	Resources []ResourceInfo `json:"resources,omitempty"`
	Templates []TemplateInfo `json:"templates,omitempty"`
	Prompts   []PromptInfo   `json:"prompts,omitempty"`
	Search    *SearchInfo    `json:"search,omitempty"`
	// Config says what is wrong with the configuration, and which project
	// files it ignores (status only, when there is something to say).
	Config *ConfigStatus `json:"config,omitempty"`
	// Failed are the servers that could not be searched, with why.
	Failed []ServerError `json:"failed,omitempty"`
	// Structured is a tool's structured content, as it came when it fits
	// the output limits with the rest of the result, else in a spill file.
	Structured any `json:"structured,omitempty"`
}

// ToolInfo is one tool in a listing or a search.
type ToolInfo struct {
	Server      string  `json:"server"`
	Name        string  `json:"name"`
	Title       string  `json:"title,omitempty"`
	Description string  `json:"description,omitempty"` // first line
	Score       float64 `json:"score,omitempty"`
	Changed     bool    `json:"changed,omitempty"` // quarantined: the definition changed since it was approved
}

// ToolDetail is one tool described in full.
type ToolDetail struct {
	Server       string               `json:"server"`
	Name         string               `json:"name"`
	Title        string               `json:"title,omitempty"`
	Description  string               `json:"description,omitempty"`
	InputSchema  any                  `json:"inputSchema,omitempty"`
	OutputSchema any                  `json:"outputSchema,omitempty"`
	Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
	Changed      bool                 `json:"changed,omitempty"` // quarantined: the definition changed since it was approved
}

// ResourceInfo is one resource, named by an opaque reference.
type ResourceInfo struct {
	Ref         string `json:"ref"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Description string `json:"description,omitempty"`
	URI         string `json:"uri"` // shown without credentials or query
}

// TemplateInfo is one resource template.
type TemplateInfo struct {
	Name        string `json:"name"`
	URITemplate string `json:"uriTemplate"`
	MIMEType    string `json:"mimeType,omitempty"`
	Description string `json:"description,omitempty"`
}

// PromptInfo is one prompt with its arguments.
type PromptInfo struct {
	Name        string      `json:"name"`
	Title       string      `json:"title,omitempty"`
	Description string      `json:"description,omitempty"`
	Arguments   []PromptArg `json:"arguments,omitempty"`
}

// PromptArg is one argument of a prompt.
type PromptArg struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// SearchInfo says how a search ran.
type SearchInfo struct {
	Query   string   `json:"query"`
	Mode    string   `json:"mode"`             // "hybrid", "lexical" or "regex"
	Reason  string   `json:"reason,omitempty"` // why a search with settings.embeddings is lexical
	Offset  int      `json:"offset"`
	Limit   int      `json:"limit"`
	Servers []string `json:"servers"`          // the servers searched
	Failed  []string `json:"failed,omitempty"` // servers that could not be indexed
}

// errorResult makes an error result; the text is the error (Do bounds it).
func (s *Session) errorResult(op proxy.Action, server string, err error) *Result {
	return &Result{Text: err.Error(), IsError: true, name: "error",
		Details: Details{Operation: string(op), Server: server, IsError: true, Error: shorten(err.Error(), maxDetailsError), Failed: failedOf(err)}}
}

// maxDetailsError bounds the error of the details, in characters; the text
// has the whole error.
const maxDetailsError = 1000

// bounded fills the result's text from lines; what names its spill files.
// Do bounds the whole result before it is returned.
func (s *Session) bounded(r *Result, what string, lines []string) *Result {
	r.Text = strings.Join(lines, "\n")
	r.name = what
	return r
}

// MCP returns the result as the result of a tools/call: text and images as
// content, details as structured content (bounded together, see
// Session.Do).
func (r *Result) MCP() *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: r.IsError, StructuredContent: r.Details}
	out.Content = append(out.Content, &mcp.TextContent{Text: r.Text})
	for _, img := range r.Images {
		out.Content = append(out.Content, img)
	}
	return out
}

// JSON returns the details as indented JSON.
func (r *Result) JSON() []byte {
	b, err := json.MarshalIndent(r.Details, "", "  ")
	if err != nil {
		return []byte(fmt.Sprintf(`{"operation": %q, "isError": true, "error": %q}`, r.Details.Operation, err))
	}
	return append(b, '\n')
}

// headline returns the first non-empty line of s, at most n characters.
func headline(s string, n int) string {
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		return shorten(line, n)
	}
	return ""
}

// shorten cuts s to at most n characters, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
