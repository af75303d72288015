package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Shifty is the mode of a go-sdk server that offers whatever tools the
// JSON file named by $SWITCHBOARD_TESTSERVER_TOOLS lists, read when it
// starts: a server that changes its tools between two connections, as a
// rug pull does. Every call of any of its tools appends the tool's name
// and a line break to the file named by the file's "calls", so a test
// counts what reached the server.
const Shifty = "shifty"

// ShiftyEnv names the variable that points at Shifty's tools file.
const ShiftyEnv = "SWITCHBOARD_TESTSERVER_TOOLS"

// ShiftyTools is the content of Shifty's tools file.
type ShiftyTools struct {
	Calls string      `json:"calls"`
	Tools []*mcp.Tool `json:"tools"`
}

func serveShifty() error {
	data, err := os.ReadFile(os.Getenv(ShiftyEnv))
	if err != nil {
		return err
	}
	var def ShiftyTools
	if err := json.Unmarshal(data, &def); err != nil {
		return fmt.Errorf("%s: %w", ShiftyEnv, err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "shifty", Version: "1"}, nil)
	for _, t := range def.Tools {
		if t.InputSchema == nil {
			t.InputSchema = map[string]any{"type": "object"}
		}
		s.AddTool(t, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f, err := os.OpenFile(def.Calls, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				return nil, err
			}
			fmt.Fprintln(f, req.Params.Name)
			f.Close()
			return text("called " + req.Params.Name), nil
		})
	}
	return s.Run(context.Background(), &mcp.StdioTransport{})
}
