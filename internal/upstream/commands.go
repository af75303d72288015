package upstream

import (
	"context"
	"fmt"

	"github.com/switchboard-mcp/switchboard/config"
)

// commands runs the commands of ${cmd:…} references while a server
// connects (config.RunCommand): bounded, and cancelled with ctx.
func commands(ctx context.Context) func([]string) ([]byte, error) {
	return func(argv []string) ([]byte, error) { return config.RunCommand(ctx, argv) }
}

// offlineError is why a server is not started offline (config.Server.Offline).
func offlineError(why string) error {
	return fmt.Errorf("not started: Switchboard is offline (settings.offline or --offline), and %s; what the catalog knows of it still answers search and describe", why)
}
