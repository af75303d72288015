package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The bench binary is also the processes it measures: the fixture server
// (testserver.Main), the bare go-sdk relay and the bare go-sdk cold client,
// chosen by the environment.
const (
	relayEnv         = "SWITCHBOARD_BENCH_RELAY"    // "http": serve the relay
	relayUpstreamEnv = "SWITCHBOARD_BENCH_UPSTREAM" // "go" or "node": what the relay or cold client reaches
	coldEnv          = "SWITCHBOARD_BENCH_COLD"     // "1": one cold call, then exit
)

func upstreamNamed(name string) (upstream, error) {
	if name == "node" {
		if u, ok := nodeUpstream(); ok {
			return u, nil
		}
		return upstream{}, fmt.Errorf("no node upstream: set MCP_PEERS_DIR to the installed npm peers")
	}
	return goUpstream(), nil
}

// modeMain runs the mode the environment names, if any, and exits.
func modeMain() {
	var err error
	switch {
	case os.Getenv(relayEnv) != "":
		err = runRelay()
	case os.Getenv(coldEnv) != "":
		err = runCold()
	default:
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// childUpstream is the upstream a relay or cold client starts, without the
// variables that made this process what it is.
func childUpstream() (upstream, error) {
	u, err := upstreamNamed(os.Getenv(relayUpstreamEnv))
	for _, k := range []string{relayEnv, relayUpstreamEnv, coldEnv} {
		_ = os.Unsetenv(k)
	}
	return u, err
}

// runRelay serves the thinnest gateway go-sdk allows: a server whose one
// tool, echo, calls the upstream's echo with a go-sdk client and returns its
// result as it came. No validation, no bounds, one shared upstream session.
func runRelay() error {
	u, err := childUpstream()
	if err != nil {
		return err
	}
	ctx := context.Background()
	cs, err := connect(ctx, nil, u)
	if err != nil {
		return err
	}
	defer cs.Close()
	s := mcp.NewServer(&mcp.Implementation{Name: "relay", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: u.tool, InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: u.tool, Arguments: req.Params.Arguments})
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "relay: serving http://%s/mcp\n", ln.Addr())
	return http.Serve(ln, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
}

// coldGrace is how long the bare cold client waits for the upstream to exit
// after closing its stdin before it signals it: the same grace switchboard
// gives (upstream.DefaultTerminateTimeout), so that a server that ignores
// the end of its input (most Node servers do) costs both sides the same.
// go-sdk's own default is 5 seconds.
const coldGrace = 100 * time.Millisecond

// runCold is a bare go-sdk client's cold call: start the upstream with
// mcp.CommandTransport, call echo once, print the answer, close, exit.
func runCold() error {
	u, err := childUpstream()
	if err != nil {
		return err
	}
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cold", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: u.cmd(), TerminateDuration: coldGrace}, nil)
	if err != nil {
		return err
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: u.tool, Arguments: map[string]any{u.argName: "hi"}})
	if err != nil {
		return err
	}
	fmt.Println(resultText(res))
	_ = cs.Close() // a server ended by a signal after the grace is no failure
	return nil
}

// argsFor returns the echo arguments of the i-th call, direct or through
// the mcp tool.
func argsFor(u upstream, viaMCP bool) func(int) any {
	return func(i int) any {
		a := map[string]any{u.argName: fmt.Sprintf("hello %d", i)}
		if viaMCP {
			return map[string]any{"tool": u.tool, "server": "f0", "args": a}
		}
		return a
	}
}

// envWithout returns the environment without the given variables.
func envWithout(keys ...string) []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		for _, k := range keys {
			if strings.HasPrefix(kv, k+"=") {
				return true
			}
		}
		return false
	})
}
