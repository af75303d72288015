package switchboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/policy"
)

// Example embeds the engine: load the configuration, make the engine,
// register its tool with the host, and pass the tool's calls to Handle.
func Example() {
	ctx := context.Background()
	home := exampleHome() // a configuration with one server, "demo"
	defer os.RemoveAll(home)

	cfg := config.Load(config.Dirs{Home: home})
	eng, err := switchboard.New(ctx, cfg, &switchboard.Options{SpillDir: filepath.Join(home, "spill")})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()

	tool := eng.Tool(ctx) // name, description and input schema to register
	fmt.Println(tool.Name)

	r := eng.Handle(ctx, json.RawMessage(`{"tool": "echo", "server": "demo", "args": {"text": "hello"}}`))
	fmt.Println(r.Text, r.IsError)
	// Output:
	// mcp
	// hello false
}

// exampleHome writes a user configuration whose one server is the test
// fixture; a real host would use config.FromEnv.
func exampleHome() string {
	home, err := os.MkdirTemp("", "switchboard-example-")
	if err != nil {
		log.Fatal(err)
	}
	path, args, env := testserver.Command(testserver.Good)
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"command": path, "args": args, "env": env}}})
	d := config.Dirs{Home: home}
	if err := os.MkdirAll(filepath.Dir(d.UserFile()), 0o700); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(d.UserFile(), data, 0o600); err != nil {
		log.Fatal(err)
	}
	return home
}

// ExampleOptions_prompt lets a host's user log in to a server that needs
// an OAuth login when a call first needs it: Prompt shows the authorization
// URL (a host opens a browser, or asks its own client to), and the call
// goes on once the user has logged in, when the browser brings the
// redirect to Switchboard's loopback listener. Tokens are kept in
// Credentials.
func ExampleOptions_prompt() {
	prompt := func(ctx context.Context, server, authURL string) (pasted string, err error) {
		fmt.Printf("Log in to %s: %s\n", server, authURL)
		return "", nil
	}
	cfg := config.Load(config.FromEnv(os.Getenv, ".", runtime.GOOS))
	store, _, err := credstore.Open(cfg.Settings.CredentialStore, cfg.Dirs.StateDir())
	if err != nil {
		log.Fatal(err)
	}
	eng, err := switchboard.New(context.Background(), cfg, &switchboard.Options{Prompt: prompt, Credentials: store})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	r := eng.Handle(context.Background(), json.RawMessage(`{"tool": "search_issues", "server": "linear", "args": {"query": "login"}}`))
	fmt.Println(r.Text)
}

// ExampleOptions_approver lets the host's user approve calls that an
// approval rule covers (settings.approve, a server's approve): here the
// configuration asks before every call, and the host allows echo once.
// Without an Approver such calls are denied.
func ExampleOptions_approver() {
	ctx := context.Background()
	home := exampleHome()
	defer os.RemoveAll(home)

	cfg := config.Load(config.Dirs{Home: home})
	cfg.Settings.Approve = config.Approval{Mode: config.ApproveAlways}
	eng, err := switchboard.New(ctx, cfg, &switchboard.Options{
		SpillDir: filepath.Join(home, "spill"),
		Approver: func(ctx context.Context, req *policy.Request) (policy.Decision, error) {
			fmt.Printf("asked about %s on %s\n", req.Tool, req.Server)
			if req.Tool == "echo" {
				return policy.AllowOnce, nil
			}
			return policy.Deny, nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()

	r := eng.Handle(ctx, json.RawMessage(`{"tool": "echo", "server": "demo", "args": {"text": "hello"}}`))
	fmt.Println(r.Text, r.IsError)
	// Output:
	// asked about echo on demo
	// hello false
}
