package doctor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// DefaultConnectTimeout bounds one server's connection and tool listing.
const DefaultConnectTimeout = 30 * time.Second

// connectConcurrency bounds how many servers connect at once.
const connectConcurrency = 8

// checkConnect connects every usable server in parallel, each bounded, and
// lists its tools, as the first use would.
func checkConnect(ctx context.Context, o Options) []Finding {
	timeout := o.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	servers := usable(o.Config)
	if o.Config.Err() != nil || len(servers) == 0 {
		return nil
	}
	pool := upstream.New(servers, &upstream.Options{Lookup: o.LookupEnv, Credentials: o.Secrets, Passive: true})
	defer pool.Close()
	out := make([]Finding, len(servers))
	sem := make(chan struct{}, connectConcurrency)
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = connectOne(ctx, pool, s, timeout)
		})
	}
	wg.Wait()
	return out
}

func connectOne(ctx context.Context, pool *upstream.Pool, s *config.Server, timeout time.Duration) Finding {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	began := time.Now()
	tools, err := pool.Tools(ctx, s.Name)
	if err == nil {
		return Finding{Check: CheckConnect, Severity: OK, Server: s.Name,
			What: fmt.Sprintf("%q connects: %d tools in %s", s.Name, len(tools), time.Since(began).Round(time.Millisecond))}
	}
	f := Finding{Check: CheckConnect, Severity: Error, Server: s.Name, What: fmt.Sprintf("%q does not connect: %v", s.Name, err), Where: s.Source.Path + " " + s.Path,
		Fix: "switchboard logs --server " + s.Name + " shows what it wrote to stderr under serve; switchboard tools " + s.Name + " tries again"}
	if s.Type != config.TransportStdio {
		// Only a stdio server has a stderr to read: for an HTTP one, the
		// question is whether anything answers at its URL.
		f.Fix = fmt.Sprintf("is the server at %s running, and is that its MCP endpoint? then switchboard tools %s tries again", s.Target(), s.Name)
	}
	var ue *upstream.Error
	if errors.As(err, &ue) && ue.Class == upstream.ClassAuth {
		f.Fix = "switchboard auth login " + s.Name
	}
	return f
}
