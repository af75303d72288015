package switchboard_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/pgtest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// demoEnv, set in a child's environment, makes this test binary the demo
// server of the examples: an MCP server over stdio with one tool, echo.
const demoEnv = "SWITCHBOARD_EXAMPLE_SERVER"

func TestMain(m *testing.M) {
	testserver.Main() // runs a fixture server when this binary is started as one (calls_test.go)
	if os.Getenv(demoEnv) != "" {
		if err := serveDemo(); err != nil {
			fmt.Fprintln(os.Stderr, "demo server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	pgtest.Main(m)
}

func serveDemo() error {
	s := mcp.NewServer(&mcp.Implementation{Name: "demo", Version: "1"}, &mcp.ServerOptions{Instructions: "A demo server: it echoes."})
	type echoArgs struct {
		Text string `json:"text" jsonschema:"what to echo"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	return s.Run(context.Background(), &mcp.StdioTransport{})
}
