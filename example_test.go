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

// ExampleEngine_Status shows every configured server without connecting
// one.
func ExampleEngine_Status() {
	ctx := context.Background()
	home := exampleHome()
	defer os.RemoveAll(home)
	eng, err := switchboard.New(ctx, config.Load(config.Dirs{Home: home}), &switchboard.Options{SpillDir: filepath.Join(home, "spill")})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()

	for _, st := range eng.Status(ctx) {
		fmt.Println(st.Name, st.State, st.Transport)
	}
	// Output:
	// demo disconnected stdio
}

// ExampleEngine_Index lists what each server offers, and stores it in the
// catalog for search.
func ExampleEngine_Index() {
	ctx := context.Background()
	home := exampleHome()
	defer os.RemoveAll(home)
	eng, err := switchboard.New(ctx, config.Load(config.Dirs{Home: home}), &switchboard.Options{SpillDir: filepath.Join(home, "spill")})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()

	results, err := eng.Index(ctx, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Printf("%s: %d tool(s) %q\n", r.Server, r.Tools, r.Error)
	}
	r := eng.Handle(ctx, json.RawMessage(`{"search": "echo"}`))
	fmt.Println(r.Details.Tools[0].Server, r.Details.Tools[0].Name)
	// Output:
	// demo: 1 tool(s) ""
	// demo echo
}

// ExampleEngine_Subscribe follows the servers' states: a host shows them,
// or registers a server's tools again when its lists change. The callback
// runs on a goroutine of the engine's, with a context Close cancels; it
// must not connect a server.
func ExampleEngine_Subscribe() {
	ctx := context.Background()
	home := exampleHome()
	defer os.RemoveAll(home)
	eng, err := switchboard.New(ctx, config.Load(config.Dirs{Home: home}), &switchboard.Options{SpillDir: filepath.Join(home, "spill")})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()

	connected := make(chan string, 1)
	cancel := eng.Subscribe(func(ctx context.Context, ev switchboard.Event) {
		if ev.Kind == switchboard.ServerState && ev.Status.State == "connected" {
			select {
			case connected <- ev.Server:
			default:
			}
		}
	})
	defer cancel()

	eng.Handle(ctx, json.RawMessage(`{"server": "demo"}`)) // connects it
	fmt.Println(<-connected, "connected")
	// Output:
	// demo connected
}

// ExampleEngine_NewSession gives each agent of a host its own session:
// resource references one agent was given mean nothing to another.
// Connections and the catalog are shared.
func ExampleEngine_NewSession() {
	ctx := context.Background()
	home := exampleHome()
	defer os.RemoveAll(home)
	eng, err := switchboard.New(ctx, config.Load(config.Dirs{Home: home}), &switchboard.Options{SpillDir: filepath.Join(home, "spill")})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()

	alice, bob := eng.NewSession(), eng.NewSession()
	for _, s := range []*switchboard.Session{alice, bob} {
		r := s.Handle(ctx, json.RawMessage(`{"tool": "demo_echo", "args": {"text": "hi"}}`))
		fmt.Println(r.Text)
	}
	// Output:
	// hi
	// hi
}

// exampleHome writes a user configuration whose one server, demo, is this
// test binary serving one tool (see TestMain); a real host would use
// config.FromEnv.
func exampleHome() string {
	home, err := os.MkdirTemp("", "switchboard-example-")
	if err != nil {
		log.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	demo := map[string]any{"command": exe, "args": []string{"-test.run=^$"},
		// A -race binary waits a second at exit, which would slow Close.
		"env": map[string]string{demoEnv: "1", "GORACE": "atexit_sleep_ms=0"}}
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"demo": demo}})
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
	key, err := cfg.Settings.CredentialKey(context.Background(), nil) // "encrypted-file"'s; nil for another store
	if err != nil {
		log.Fatal(err)
	}
	store, _, err := credstore.Open(cfg.Settings.CredentialStore, cfg.Dirs.StateDir(), &credstore.OpenOptions{Key: key, KeyRef: cfg.Settings.CredentialKeyRef()})
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
