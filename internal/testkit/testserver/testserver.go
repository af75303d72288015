// Package testserver is a misbehaving MCP server for tests: well-behaved when
// asked (built with go-sdk), and otherwise crashing, hanging, printing
// garbage, writing huge lines, dying on the protocol probe, paginating
// forever and so on (raw JSON-RPC, where the misbehaviour demands it).
//
// It runs inside the test binary: TestMain calls [Main], which takes over
// when the environment names a mode, and tests start the binary itself with
// [Command]. Nothing needs building.
package testserver

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Env names the environment variable that selects the mode.
const Env = "SWITCHBOARD_TESTSERVER"

// DelayEnv names the variable that sets how long SlowGood sleeps before it
// serves.
const DelayEnv = "SWITCHBOARD_TESTSERVER_DELAY"

// Modes.
const (
	Good           = "good"            // go-sdk server: echo, slow, hang, crash, big, spawn, add-tool, a prompt, a resource
	Roots          = "roots"           // go-sdk server whose tool "roots" lists the client's roots
	EnvReport      = "env-report"      // go-sdk server whose tool "env" tells whether a variable is set, and its SHA-256
	Meta           = "meta"            // go-sdk server whose tool "meta" answers with the request's _meta as JSON; it writes "meta: called" to stderr
	ExitAtStart    = "exit-at-start"   // prints "Error: Cannot find module …" to stderr and exits 1
	NoInit         = "no-init"         // reads requests, never answers
	ExitOnProbe    = "exit-on-probe"   // exits when it receives server/discover
	IgnoreProbe    = "ignore-probe"    // never answers server/discover, answers the rest
	Garbage        = "garbage"         // prints banners and junk lines between messages
	HugeLine       = "huge-line"       // tools "big-first" and "big-last" answer with a 20 MB line
	RepeatCursor   = "repeat-cursor"   // tools/list repeats its cursor
	ManyPages      = "many-pages"      // tools/list has 101 pages
	ManyTools      = "many-tools"      // tools/list has 10,001 tools
	UnsafeNames    = "unsafe-names"    // tools with empty, control-character and 200-byte names
	UnknownContent = "unknown-content" // tools/call answers with an unknown content type
	Sleeper        = "sleeper"         // sleeps until killed (a grandchild for group tests)
	SlowGood       = "slow-good"       // Good, after sleeping $SWITCHBOARD_TESTSERVER_DELAY (a Go duration)
	SlowModern     = "slow-modern"     // speaks only 2026-07-28 (initialize after server/discover ends it), after the delay
	OnlyModern     = "only-modern"     // speaks only 2026-07-28: initialize gets an error
	Linger         = "linger"          // Good, but stays after its input ends (as most Node servers do), until signalled
	Stubborn       = "stubborn"        // Linger, and ignores SIGTERM: only SIGKILL ends it
	Away           = "away"            // Good, and tool "spawn-away" starts a grandchild in a process group of its own
	Gated          = "gated"           // Good, and tool "gate" reports progress, then waits for a writer to open and close a named pipe
)

// Main runs the mode named by $SWITCHBOARD_TESTSERVER, if any, and exits.
// Call it first in TestMain.
func Main() {
	mode := os.Getenv(Env)
	if mode == "" {
		return
	}
	if err := run(mode); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Command returns how to start the server in a mode: the test binary, its
// arguments, and the environment entry that selects the mode.
func Command(mode string) (path string, args []string, env map[string]string) {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	// A -race binary sleeps a second at exit (atexit_sleep_ms) to collect
	// reports from other goroutines: that would slow every close down.
	return exe, []string{"-test.run=^$"}, map[string]string{Env: mode, "GORACE": "atexit_sleep_ms=0"}
}

func run(mode string) error {
	switch mode {
	case Good:
		return serveGood()
	case SlowGood:
		d, err := time.ParseDuration(os.Getenv(DelayEnv))
		if err != nil {
			return fmt.Errorf("%s: %v", DelayEnv, err)
		}
		time.Sleep(d)
		return serveGood()
	case Catalog:
		return serveCatalog()
	case Sized:
		return SizedServer().Run(context.Background(), &mcp.StdioTransport{})
	case Typed:
		return serveTyped()
	case Shifty:
		return serveShifty()
	case Roots:
		return serveRoots()
	case EnvReport:
		return serveEnvReport()
	case Meta:
		return serveMeta()
	case ExitAtStart:
		fmt.Fprintln(os.Stderr, "node:internal/modules/cjs/loader:1228\n  throw err;\n\nError: Cannot find module '/nowhere/index.js'\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)")
		os.Exit(1)
	case Sleeper:
		select {}
	case Away:
		return serveGood(addSpawnAway)
	case Gated:
		return serveGood(addGate)
	case Linger, Stubborn:
		if mode == Stubborn {
			signal.Ignore(syscall.SIGTERM)
		}
		_ = serveGood() // returns when its input ends
		select {}
	}
	if f, ok := extraModes[mode]; ok {
		return f()
	}
	b, ok := behaviours[mode]
	if !ok {
		return fmt.Errorf("unknown mode %q", mode)
	}
	return serveRaw(os.Stdin, os.Stdout, b)
}
