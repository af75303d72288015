package testserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveEnvReport serves a go-sdk server over stdio whose one tool, "env",
// tells whether an environment variable of the server is set, and the
// SHA-256 of its value: a test learns that a secret reached the server
// without the value ever being in a result.
func serveEnvReport() error {
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver-env", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Says whether the environment variable name is set, and the SHA-256 of its value."},
		func(_ context.Context, _ *mcp.CallToolRequest, a struct {
			Name string `json:"name"`
		}) (*mcp.CallToolResult, any, error) {
			return text(EnvAnswer(a.Name, os.Getenv(a.Name))), nil, nil
		})
	return s.Run(context.Background(), &mcp.StdioTransport{})
}

// EnvAnswer is what the "env" tool of mode EnvReport answers for a
// variable name whose value is value.
func EnvAnswer(name, value string) string {
	if value == "" {
		return name + " is not set"
	}
	sum := sha256.Sum256([]byte(value))
	return fmt.Sprintf("%s is set, sha256 %s", name, hex.EncodeToString(sum[:]))
}
