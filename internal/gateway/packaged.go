package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// hosted is what a Go host adds to the configuration: its packaged servers
// and its facades.
type hosted struct {
	cfg     *config.Config         // with the packaged servers
	servers map[string]*mcp.Server // packaged, by name
	facades *facades               // nil without any
}

// addHosted adds the packaged servers and facades of opts to cfg. It checks each
// facade against its own schema and, for a packaged server, against the
// tool it calls, listed in memory now: an error names the facade, the
// field and what to do.
func addHosted(ctx context.Context, cfg *config.Config, opts *Options) (*hosted, error) {
	h := &hosted{cfg: cfg}
	if opts == nil || len(opts.Servers) == 0 && len(opts.Facades) == 0 {
		return h, nil
	}
	var defs []*config.Server
	h.servers = map[string]*mcp.Server{}
	for _, p := range opts.Servers {
		s, err := packagedServer(cfg, p)
		if err != nil {
			return nil, err
		}
		defs = append(defs, s)
		h.servers[p.Name] = p.Server
	}
	merged, err := cfg.WithPackaged(defs)
	if err != nil {
		return nil, err
	}
	h.cfg = merged
	if h.facades, err = newFacades(merged, opts.Facades); err != nil {
		return nil, err
	}
	if h.facades == nil {
		return h, nil
	}
	for server := range h.facades.byServer {
		if srv := h.servers[server]; srv != nil {
			tools, err := listInMemory(ctx, srv, server)
			if err != nil {
				return nil, err
			}
			if err := h.facades.checkAll(server, tools); err != nil {
				return nil, err
			}
		}
	}
	h.facades.annotate(merged)
	return h, nil
}

// packagedServer is the definition of a packaged server.
func packagedServer(cfg *config.Config, p host.Server) (*config.Server, error) {
	if p.Server == nil {
		return nil, fmt.Errorf("packaged server %q: Server is nil: give the *mcp.Server to connect", p.Name)
	}
	s := &config.Server{
		Name: p.Name, Source: config.PackagedSource, Type: config.TransportInProcess,
		Lifecycle: p.Lifecycle, IdleTimeout: p.IdleTimeout, RequestTimeout: p.RequestTimeout,
		SearchKeywords: p.SearchKeywords, ProtocolVersion: "auto", Revision: p.Revision,
		DirectTools: config.DirectTools{Names: slices.Clone(p.DirectTools)},
	}
	switch s.Lifecycle {
	case "":
		s.Lifecycle = config.LifecycleLazy
	case config.LifecycleLazy, config.LifecycleEager, config.LifecycleKeepAlive, config.LifecycleLazyKeepAlive:
	default:
		return nil, fmt.Errorf("packaged server %q: unknown lifecycle %q: use lazy, eager, keep-alive or lazy-keep-alive", p.Name, p.Lifecycle)
	}
	if s.IdleTimeout <= 0 {
		s.IdleTimeout = cfg.Settings.IdleTimeout
	}
	if s.RequestTimeout <= 0 {
		s.RequestTimeout = cfg.Settings.RequestTimeout
	}
	if s.Revision == "" {
		s.Revision = rand.Text()
	}
	return s, nil
}

// listInMemory lists a packaged server's tools over a session of its own,
// which it closes: it checks facades before the engine starts anything.
func listInMemory(ctx context.Context, srv *mcp.Server, name string) ([]*mcp.Tool, error) {
	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverEnd, nil)
	if err != nil {
		return nil, fmt.Errorf("listing the tools of packaged server %q: %w", name, err)
	}
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "switchboard", Version: "facade-check"}, nil)
	cs, err := c.Connect(ctx, clientEnd, nil)
	if err != nil {
		return nil, fmt.Errorf("listing the tools of packaged server %q: %w", name, err)
	}
	defer cs.Close()
	var tools []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing the tools of packaged server %q: %w", name, err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// rewriter returns the facades as the pool's Rewriter, logging to log, or
// nil without any.
func (h *hosted) rewriter(log *slog.Logger) upstream.Rewriter {
	if h.facades == nil {
		return nil
	}
	h.facades.log = log
	return h.facades
}

// digest is a short stable hash of v, for a definition's Revision.
func digest(v any) string {
	data, _ := json.Marshal(v)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}
