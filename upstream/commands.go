package upstream

import (
	"context"

	"github.com/switchboard-mcp/switchboard/config"
)

// commands runs the commands of ${cmd:…} references while a server
// connects (config.RunCommand): bounded, and cancelled with ctx.
func commands(ctx context.Context) func([]string) ([]byte, error) {
	return func(argv []string) ([]byte, error) { return config.RunCommand(ctx, argv) }
}
