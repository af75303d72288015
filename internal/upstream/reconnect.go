package upstream

import (
	"context"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-mcp/switchboard/telemetry"
)

// Defaults of config.Reconnect.
const (
	defaultReconnectAttempts = 3
	defaultReconnectDelay    = 500 * time.Millisecond
	maxReconnectDelay        = 30 * time.Second
)

// A reconnectLoop is a running automatic reconnection of one server.
type reconnectLoop struct{ cancel context.CancelFunc }

// startReconnectLocked starts reconnecting in the background, unless that is
// already under way. s.mu is held.
func (s *server) startReconnectLocked() {
	if s.recon != nil || s.closed {
		return
	}
	ctx, cancel := context.WithCancel(s.pool.ctx)
	loop := &reconnectLoop{cancel: cancel}
	if !s.pool.goOwned(func() { s.reconnectLoop(ctx, loop) }) {
		cancel()
		return
	}
	s.recon = loop
}

// stopReconnectLocked cancels automatic reconnection. s.mu is held.
func (s *server) stopReconnectLocked() {
	if s.recon != nil {
		s.recon.cancel()
		s.recon = nil
	}
}

// reconnectLoop tries to connect up to MaxAttempts times, with exponential
// backoff and jitter from BaseDelay. It stops when connected, when it is
// cancelled (Close, an explicit Reconnect), or when an error cannot be cured
// by trying again (configuration, authorization). It never repeats a call:
// it only connects.
func (s *server) reconnectLoop(ctx context.Context, loop *reconnectLoop) {
	defer func() {
		s.mu.Lock()
		if s.recon == loop {
			s.recon = nil
		}
		s.mu.Unlock()
		loop.cancel()
	}()
	attempts := s.cfg.Reconnect.MaxAttempts
	if attempts <= 0 {
		attempts = defaultReconnectAttempts
	}
	ctx, span := s.pool.opts.Telemetry.StartReconnect(ctx, s.cfg.Name)
	outcome, errType := telemetry.OutcomeError, "gave_up"
	defer func() { span.End(outcome, errType) }()
	for i := range attempts {
		if !sleep(ctx, backoff(s.cfg.Reconnect.BaseDelay, i)) {
			errType = "canceled"
			return
		}
		span.Event("attempt", telemetry.KeyAttempt.Int(i+1))
		d, ok := s.reconnectAttempt(ctx)
		if !ok {
			outcome, errType = telemetry.OutcomeOK, ""
			return
		}
		if d.err == nil {
			outcome, errType = telemetry.OutcomeOK, ""
			return
		}
		if c := classOf(d.err, ClassTransport); c == ClassConfig || c == ClassAuth || c == ClassClosed {
			errType = string(c)
			return
		}
		s.log.Warn("reconnect attempt failed", "attempt", i+1, "of", attempts, "error", d.err)
	}
}

// reconnectAttempt joins or starts a connection attempt and waits for it.
// It reports false when there is nothing (more) to do.
func (s *server) reconnectAttempt(ctx context.Context) (*dialCall, bool) {
	s.mu.Lock()
	if s.sess != nil || s.closed {
		s.mu.Unlock()
		return nil, false
	}
	d, err := s.awaitDialUnlock(ctx)
	if err != nil {
		return nil, false
	}
	return d, true
}

// backoff returns the delay before attempt i (from 0): base·2^i, capped,
// with ±20% jitter.
func backoff(base time.Duration, i int) time.Duration {
	if base <= 0 {
		base = defaultReconnectDelay
	}
	d := base << min(i, 16)
	if d > maxReconnectDelay || d <= 0 {
		d = maxReconnectDelay
	}
	jitter := time.Duration(rand.Int64N(int64(d)/5*2+1)) - d/5
	return d + jitter
}

// sleep waits d or until ctx ends; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Preconnect starts connecting the named server in the background, as an
// eager server connects, unless it is connected or connecting already or
// the pool is passive. A name the pool does not hold is ignored. It calls
// OnChange on a goroutine of its own.
//
// It waits only until the connection is under way (for a stdio server,
// until its process has started: resolving its variables may run a
// command) or ctx is done. Waiting hands this goroutine's thread to the
// dial at once, which would otherwise wait for another thread to wake
// (about half a millisecond on a busy two-core machine), and the fork does
// not compete with what the caller does next.
func (p *Pool) Preconnect(ctx context.Context, name string) {
	s := p.servers[name]
	if s == nil || p.opts.Passive {
		return
	}
	s.mu.Lock()
	if s.sess != nil || s.usable(opConnect) != nil {
		s.mu.Unlock()
		return
	}
	d, started := s.dialLocked(nil, trace.SpanContext{})
	s.mu.Unlock()
	select {
	case <-d.started:
	case <-d.done:
	case <-ctx.Done():
	}
	if started {
		// Not on the caller's goroutine: OnChange may wait for it (an
		// engine handles changes once it is whole).
		p.goOwned(func() { p.notify(name) })
	}
}

// connectEagerly connects an eager or keep-alive server when the pool is
// made; a keep-alive server that fails keeps trying.
func (s *server) connectEagerly() {
	s.mu.Lock()
	d, started := s.dialLocked(nil, trace.SpanContext{})
	s.mu.Unlock()
	if started {
		s.pool.notify(s.cfg.Name)
	}
	<-d.done
	if d.err != nil && s.autoReconnect() {
		s.mu.Lock()
		s.startReconnectLocked()
		s.mu.Unlock()
	}
}
