package switchboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

type greetArgs struct {
	Name     string `json:"name"`
	Greeting string `json:"greeting"`
}

// Example_facade ships a server in the host's binary and gives the model one
// narrow tool over it: the facade fixes the greeting and passes the name on
// as the caller gives it, under another name.
func Example_facade() {
	ctx := context.Background()
	greeter := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1"}, nil)
	mcp.AddTool(greeter, &mcp.Tool{Name: "greet", Description: "Greets someone."},
		func(_ context.Context, _ *mcp.CallToolRequest, a greetArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Greeting + ", " + a.Name + "!"}}}, nil, nil
		})

	home, err := os.MkdirTemp("", "switchboard-example-") // no configured servers; a real host would use config.FromEnv
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(home)
	eng, err := switchboard.New(ctx, config.Load(config.Dirs{Home: home}), &switchboard.Options{
		SpillDir: filepath.Join(home, "spill"),
		Servers:  []host.Server{{Name: "greeter", Server: greeter}},
		Facades: []host.Facade{{
			Name: "welcome", Description: "Welcomes a new user by name.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"user":{"type":"string"}},"required":["user"]}`),
			Server:      "greeter", Tool: "greet",
			Fixed:     map[string]any{"greeting": "Welcome aboard"},
			Rename:    map[string]string{"user": "name"},
			Exclusive: true,
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()

	r := eng.Handle(ctx, json.RawMessage(`{"tool": "welcome", "server": "greeter", "args": {"user": "Ada"}}`))
	fmt.Println(r.Text)
	r = eng.Handle(ctx, json.RawMessage(`{"tool": "greet", "server": "greeter", "args": {"name": "Ada", "greeting": "Go away"}}`))
	fmt.Println(r.IsError)
	// Output:
	// Welcome aboard, Ada!
	// true
}
