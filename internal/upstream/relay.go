package upstream

import (
	"context"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a gateway asks of a server on behalf of its clients, kept across
// connections: the log level, and resource subscriptions. Each is sent at
// once (connecting if needed) and again on every later connection, since a
// new session starts with neither.

// SetLoggingLevel asks the server to send log messages at level and above.
// "" forgets the level for later connections. A server that did not declare
// logging is not asked.
func (p *Pool) SetLoggingLevel(ctx context.Context, name string, level mcp.LoggingLevel) error {
	s, err := p.serverFor(ctx, name, "setting the log level")
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.logLevel = level
	s.mu.Unlock()
	if level == "" {
		return nil
	}
	_, err = run(ctx, p, name, "setting the log level", func(ctx context.Context, _ *server, sess *session) (struct{}, error) {
		return struct{}{}, sess.setLoggingLevel(ctx, level)
	})
	return err
}

// Subscribe subscribes to updates of the resource at uri; they arrive at
// the ResourceUpdatedHandler of Options.Client.
func (p *Pool) Subscribe(ctx context.Context, name, uri string) error {
	s, err := p.serverFor(ctx, name, "subscribing to a resource")
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.subs == nil {
		s.subs = map[string]bool{}
	}
	s.subs[uri] = true
	s.mu.Unlock()
	_, err = run(ctx, p, name, "subscribing to a resource", func(ctx context.Context, _ *server, sess *session) (struct{}, error) {
		return struct{}{}, sess.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	})
	return err
}

// Unsubscribe ends a subscription made with Subscribe. It does not connect
// a server that is not connected: a new session has no subscriptions.
func (p *Pool) Unsubscribe(ctx context.Context, name, uri string) error {
	s, err := p.serverFor(ctx, name, "unsubscribing from a resource")
	if err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.subs, uri)
	connected := s.sess != nil
	s.mu.Unlock()
	if !connected {
		return nil
	}
	_, err = run(ctx, p, name, "unsubscribing from a resource", func(ctx context.Context, _ *server, sess *session) (struct{}, error) {
		return struct{}{}, sess.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
	return err
}

// restore sends a new session the log level and subscriptions asked for
// earlier. A failure is logged: the connection is still good.
func (s *server) restore(ctx context.Context, sess *session) {
	s.mu.Lock()
	level := s.logLevel
	subs := slices.Sorted(maps.Keys(s.subs))
	s.mu.Unlock()
	if level != "" {
		if err := sess.setLoggingLevel(ctx, level); err != nil {
			s.log.Warn("setting the log level again after connecting", "err", sess.scrub.error(err))
		}
	}
	for _, uri := range subs {
		if err := sess.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			s.log.Warn("subscribing to a resource again after connecting", "err", sess.scrub.error(err))
		}
	}
}

func (sess *session) setLoggingLevel(ctx context.Context, level mcp.LoggingLevel) error {
	if !sess.has(func(c *mcp.ServerCapabilities) bool { return c.Logging != nil }) {
		return nil
	}
	return sess.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
}
