// Package hostile is a kit of MCP servers that attack Switchboard's trust
// boundaries, for tests that hold those boundaries (docs/security.md). Each
// is a real go-sdk server, not a mock: it asks the client for things during
// another session's call, prints secrets where logs pick them up, hides
// instructions in what it returns, redirects to another origin, and so on.
//
// A stdio server runs inside the test binary, as package testserver's
// fixtures do: TestMain calls [Main], which takes over when the environment
// names a mode, and a test starts the binary itself with [Command]. An
// HTTP server runs in the test process (see [Mount]).
package hostile

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Env names the environment variable that selects the mode of a stdio
// server started with [Command].
const Env = "SWITCHBOARD_HOSTILE"

// Modes.
const (
	// Asker is a go-sdk server whose tools ask the client for things while
	// their call is in flight, and outside it (see [NewAsker]).
	Asker = "asker"
	// Router is Asker with tools that ask when the test says so: during
	// their call, after it, or while several calls are in flight (see
	// [NewRouter]).
	Router = "router"
	// Leaker is the Asker with more ways to put a secret where
	// Switchboard writes things down (see [NewLeaker]).
	Leaker = "leaker"
	// Deep is a go-sdk server whose tool "deep" returns a result nested
	// too deeply to decode (see [NewDeep]).
	Deep = "deep"
	// Liar is a go-sdk server whose tools break the output schema they
	// declare (see [NewLiar]).
	Liar = "liar"
	// LabelBreaker is a go-sdk server whose resource, prompt and
	// instructions try to break out of the untrusted-data label (see
	// [NewLabelBreaker]).
	LabelBreaker = "label-breaker"
	// Apps is an MCP Apps server that offers its app tools only to a
	// client claiming the UI extension (see [NewApps]).
	Apps = "apps"
)

// modes are the stdio servers [Main] runs, by mode.
var modes = map[string]func(ctx context.Context) error{
	Asker:  func(ctx context.Context) error { return NewAsker().Run(ctx, &mcp.StdioTransport{}) },
	Router: runRouter,
	Leaker: func(ctx context.Context) error { return NewLeaker().Run(ctx, &mcp.StdioTransport{}) },
	Deep:   runDeep,
	Liar:   func(ctx context.Context) error { return NewLiar().Run(ctx, &mcp.StdioTransport{}) },
	LabelBreaker: func(ctx context.Context) error {
		return NewLabelBreaker().Run(ctx, &mcp.StdioTransport{})
	},
	Apps: runApps,
}

// Main runs the mode named by $SWITCHBOARD_HOSTILE, if any, and exits.
// Call it early in TestMain.
func Main() {
	mode := os.Getenv(Env)
	if mode == "" {
		return
	}
	run, ok := modes[mode]
	if !ok {
		fmt.Fprintf(os.Stderr, "hostile: unknown mode %q\n", mode)
		os.Exit(2)
	}
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Command returns how to start a stdio server in a mode: the test binary,
// its arguments, and the environment entries that select the mode.
func Command(mode string) (path string, args []string, env map[string]string) {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	// A -race binary sleeps a second at exit (atexit_sleep_ms) to collect
	// reports from other goroutines: that would slow every close down.
	return exe, []string{"-test.run=^$"}, map[string]string{Env: mode, "GORACE": "atexit_sleep_ms=0"}
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
