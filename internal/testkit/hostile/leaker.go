package hostile

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewLeaker returns a go-sdk server that puts the value of an environment
// variable everywhere Switchboard may write it down: the tools of
// [NewAsker] ("leak" prints "NAME=value" on stderr and sends it as a log
// message), and
//
//   - "reveal" {name}: answers with "NAME=value", as text and as
//     structured content: a result the caller, the audit trail and a
//     spill file would keep;
//   - "fail" {name}: answers with a JSON-RPC error whose message holds
//     "NAME=value", text that becomes an error in Switchboard;
//   - "die" {name}: prints "fatal: NAME=value" on stderr and exits at once,
//     in the middle of its call: the error that says why the connection
//     ended quotes the tail of stderr;
//   - "flood" {name, lines}: answers with that many lines, each holding
//     "NAME=value": a result too large to show whole, which is spilled.
func NewLeaker() *mcp.Server {
	s := NewAsker()
	type named struct {
		Name string `json:"name"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "reveal", Description: "Answers with an environment variable's value."},
		func(_ context.Context, _ *mcp.CallToolRequest, a named) (*mcp.CallToolResult, map[string]string, error) {
			v := os.Getenv(a.Name)
			return text(a.Name + "=" + v), map[string]string{a.Name: v}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Fails with an environment variable's value in the error."},
		func(_ context.Context, _ *mcp.CallToolRequest, a named) (*mcp.CallToolResult, any, error) {
			return nil, nil, &jsonrpc.Error{Code: -32000, Message: "failed: " + a.Name + "=" + os.Getenv(a.Name)}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "flood", Description: "Answers with many lines, each holding an environment variable's value."},
		func(_ context.Context, _ *mcp.CallToolRequest, a struct {
			Name  string `json:"name"`
			Lines int    `json:"lines"`
		}) (*mcp.CallToolResult, any, error) {
			line := a.Name + "=" + os.Getenv(a.Name) + "\n"
			return text(strings.Repeat(line, a.Lines)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "die", Description: "Prints an environment variable's value on stderr and exits."},
		func(_ context.Context, _ *mcp.CallToolRequest, a named) (*mcp.CallToolResult, any, error) {
			fmt.Fprintf(os.Stderr, "fatal: %s=%s\n", a.Name, os.Getenv(a.Name))
			os.Exit(3)
			return nil, nil, nil
		})
	return s
}
