package hostile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DeepArgs are the arguments of [NewDeep]'s tool "deep".
type DeepArgs struct {
	Levels int `json:"levels"` // how deeply the response nests, counting its own object
}

// NewDeep is a go-sdk server whose tool "deep" answers with a response
// that nests as many levels as asked (past the 1,000 go-sdk's decoder
// reads, and past the 10,000 of encoding/json), and whose tool "echo"
// answers "small": a response the gateway cannot read must fail its call
// at once, with the reason, and leave the connection to the next call.
//
// go-sdk does not write a value that deep itself: the tool's structured
// content holds a placeholder that [DeepWriter], the server's output,
// replaces with the brackets.
func NewDeep() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "hostile-deep", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "deep", Description: "Answers with a response nested args.levels deep."},
		func(_ context.Context, _ *mcp.CallToolRequest, a DeepArgs) (*mcp.CallToolResult, any, error) {
			// The message, its result and the structured content are three
			// levels; the brackets are the rest.
			placeholder := fmt.Sprintf("%s%d", deepMark, max(a.Levels-3, 0))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deep"}}, StructuredContent: map[string]any{"v": placeholder}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Answers small."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text("small"), nil, nil
		})
	return s
}

const deepMark = "hostile-deep-brackets:"

var deepPlaceholder = regexp.MustCompile(`"` + deepMark + `([0-9]+)"`)

// DeepWriter writes what a [NewDeep] server writes to w, its placeholders
// replaced by as many levels of brackets as they name.
type DeepWriter struct{ W io.Writer }

func (d DeepWriter) Write(p []byte) (int, error) {
	out := deepPlaceholder.ReplaceAllFunc(p, func(m []byte) []byte {
		n, _ := strconv.Atoi(string(deepPlaceholder.FindSubmatch(m)[1]))
		return append(bytes.Repeat([]byte("["), n), bytes.Repeat([]byte("]"), n)...)
	})
	if _, err := d.W.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (DeepWriter) Close() error { return nil }

// runDeep serves [NewDeep] on stdin and stdout.
func runDeep(ctx context.Context) error {
	return NewDeep().Run(ctx, &mcp.IOTransport{Reader: os.Stdin, Writer: DeepWriter{W: os.Stdout}})
}
