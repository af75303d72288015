package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sized is the mode of a go-sdk server whose answers are as large as asked,
// for tests of the output bounds and the read cap:
//
//   - tool "sized" answers {bytes, lines, structured, image}: a text of bytes
//     'x' (or lines lines of "x"), structured content {"s": "yyy…"} whose
//     string has structured bytes, and an image/png of image bytes;
//   - tool "typed" has an output schema that requires "s", and answers
//     {"s": "yyy…"} of structured bytes, with its JSON as text, as the
//     spec asks;
//   - tool "file" answers as a file server does: a text of bytes lines
//     ("line N\n", cut to bytes), and the same text as structured content
//     {"content": TEXT};
//   - the resource template "big://{bytes}" reads as a text of bytes 'x';
//   - the prompt "big" (argument "bytes") is one message of bytes 'x'.
const Sized = "sized"

type sizedArgs struct {
	Bytes      int `json:"bytes,omitempty"`
	Lines      int `json:"lines,omitempty"`
	Structured int `json:"structured,omitempty"`
	Image      int `json:"image,omitempty"`
}

// Structured is the structured content the Sized tools answer with n: its
// JSON is {"s":"yyy…"}.
func Structured(n int) map[string]any {
	return map[string]any{"s": strings.Repeat("y", n)}
}

// SizedServer returns the Sized server, to serve over any transport.
func SizedServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "sized", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "sized", Description: "Answers with as many bytes as asked."},
		func(_ context.Context, _ *mcp.CallToolRequest, a sizedArgs) (*mcp.CallToolResult, any, error) {
			res := &mcp.CallToolResult{}
			switch {
			case a.Lines > 0:
				res.Content = append(res.Content, &mcp.TextContent{Text: strings.Repeat("x\n", a.Lines)})
			case a.Bytes > 0:
				res.Content = append(res.Content, &mcp.TextContent{Text: strings.Repeat("x", a.Bytes)})
			}
			if a.Image > 0 {
				res.Content = append(res.Content, &mcp.ImageContent{MIMEType: "image/png", Data: []byte(strings.Repeat("i", a.Image))})
			}
			if a.Structured > 0 {
				res.StructuredContent = Structured(a.Structured)
			}
			return res, nil, nil
		})
	schema := &jsonschema.Schema{Type: "object", Required: []string{"s"},
		Properties: map[string]*jsonschema.Schema{"s": {Type: "string"}}}
	mcp.AddTool(s, &mcp.Tool{Name: "typed", Description: "Answers with structured content of as many bytes as asked.", OutputSchema: schema},
		func(_ context.Context, _ *mcp.CallToolRequest, a sizedArgs) (*mcp.CallToolResult, any, error) {
			out := Structured(a.Structured)
			js, _ := json.Marshal(out)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(js)}}}, out, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "file", Description: "Answers with a file of as many bytes as asked, as text and as structured content."},
		func(_ context.Context, _ *mcp.CallToolRequest, a sizedArgs) (*mcp.CallToolResult, any, error) {
			var b strings.Builder
			for i := 0; b.Len() < a.Bytes; i++ {
				fmt.Fprintf(&b, "line %d\n", i)
			}
			text := b.String()[:a.Bytes]
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, map[string]any{"content": text}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "big://{bytes}", Name: "big", MIMEType: "text/plain"},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			n, err := strconv.Atoi(strings.TrimPrefix(r.Params.URI, "big://"))
			if err != nil {
				return nil, fmt.Errorf("big://N: %v", err)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: strings.Repeat("x", n)}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "big", Arguments: []*mcp.PromptArgument{{Name: "bytes", Required: true}}},
		func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			n, err := strconv.Atoi(r.Params.Arguments["bytes"])
			if err != nil {
				return nil, fmt.Errorf("bytes: %v", err)
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: strings.Repeat("x", n)}}}}, nil
		})
	return s
}
