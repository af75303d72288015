package gateway

import (
	"context"

	"github.com/switchboard-mcp/switchboard/proxy"
)

// description is the proxy tool's description (proxy.Description) over the
// usable servers and what the catalog knows of them.
func (e *Engine) description(ctx context.Context) string {
	var servers []proxy.ServerSummary
	for i, s := range e.usable() {
		sum := proxy.ServerSummary{Name: s.Name}
		if i < proxy.MaxDescribedServers {
			if ent, ok := e.cached(ctx, s); ok {
				sum.Known, sum.Tools, sum.Instructions = true, len(ent.Tools), ent.Instructions
			}
		}
		servers = append(servers, sum)
	}
	return proxy.Description(servers)
}
