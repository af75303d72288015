// Command codemode measures code mode (docs/codemode.md) against the
// tool-calling route on multi-step tasks over the real npm MCP servers
// (filesystem, memory, everything): for each task, the tokens that pass
// through the model's context, the model round trips and the wall time of
// each route, through a real switchboard serve over stdio. Both routes must
// give the same answer; a task whose answers differ fails the run.
//
//	. .ci/peers.sh && cd bench && go run ./codemode
//	cd bench && go run ./codemode -v          # also prints every request and result
//
// Tokens are counted with tiktoken's o200k_base (offline tables).
// See docs/codemode.md#measured.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	verbose := flag.Bool("v", false, "print every request and result text each route puts in the context")
	only := flag.String("task", "", "run only the task of this `name`")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *verbose, *only); err != nil {
		fmt.Fprintln(os.Stderr, "codemode:", err)
		os.Exit(1)
	}
}
