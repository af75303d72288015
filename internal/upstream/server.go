package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/telemetry"
)

// A server is the connection state machine of one configured server.
//
// Lock order: server.mu before the lock of the pool's lifecycle.Group
// (goOwned). No lock is held while calling out: to a server, to OnChange,
// or while closing a session.
type server struct {
	pool    *Pool
	cfg     *config.Server
	user    string     // the signed-in user whose own connection this is (per-user credentials); "" for the shared one
	userTok *userToken // user's latest access token to the gateway, for token exchange (exchange.go); nil for the shared one
	log     *slog.Logger
	timeout time.Duration // the request timeout

	mu       sync.Mutex
	state    State
	fail     *failure // the last error, kept for status
	gen      uint64   // connections made so far
	sess     *session // the live session; nil unless connected
	dial     *dialCall
	lists    [numKinds]cachedList
	fetching map[listKey]*listCall // list fetches under way
	refresh  [numKinds]refreshState
	inflight int // operations using sess
	lastUse  time.Time
	connAt   time.Time // when the last connection was made
	idle     *time.Timer
	fellBack bool   // "latest" negotiation fell back once: pin the legacy version
	overSSE  string // why the last connection is legacy SSE's (a URL without a type rejected Streamable HTTP); "" if it is not
	modern   bool   // "auto" over stdio: the server refused 2025-11-25's handshake once, so probe for 2026-07-28
	recon    *reconnectLoop
	procs    map[*process]bool // children alive, dialing or connected
	stderr   *ring             // of the last child
	closed   bool
	logLevel mcp.LoggingLevel // asked for with SetLoggingLevel; "" for none
	subs     map[string]bool  // resources subscribed to with Subscribe
}

// A dialCall is one connection attempt, shared by every caller that needs
// the server while it runs.
type dialCall struct {
	prev    *session          // a session to close before connecting (reconnect)
	from    trace.SpanContext // the span of the operation that started it, if any
	done    chan struct{}     // closed when sess or err is set
	started chan struct{}     // closed once the transport is under way (underway)
	once    sync.Once
	sess    *session
	err     error
}

// underway tells whoever waits on started that the attempt no longer needs
// the goroutine that made it: a stdio server's process has been started
// (or failed to), or an HTTP connection is being made. It is idempotent.
func (d *dialCall) underway() { d.once.Do(func() { close(d.started) }) }

func newServer(p *Pool, cfg *config.Server) *server {
	s := &server{pool: p, cfg: cfg, timeout: cfg.RequestTimeout, state: StateDisconnected,
		log: p.log.With("server", cfg.Name), procs: make(map[*process]bool)}
	if s.timeout <= 0 {
		s.timeout = config.DefaultRequestTimeout
	}
	switch {
	case cfg.Disabled:
		s.state = StateDisabled
	case cfg.Err != nil:
		s.state = StateFailed
		s.fail = &failure{class: ClassConfig, msg: cfg.Err.Error(), at: time.Now()}
	}
	return s
}

func (s *server) lifecycle() config.Lifecycle {
	if s.cfg.Lifecycle == "" {
		return config.LifecycleLazy
	}
	return s.cfg.Lifecycle
}

// eager reports whether the server connects when the pool is made.
func (s *server) eager() bool {
	l := s.lifecycle()
	return (l == config.LifecycleEager || l == config.LifecycleKeepAlive) && s.usable("") == nil
}

// keepAlive reports whether the server is health-checked and reconnected.
func (s *server) keepAlive() bool {
	l := s.lifecycle()
	return l == config.LifecycleKeepAlive || l == config.LifecycleLazyKeepAlive
}

func (s *server) autoReconnect() bool { return s.cfg.Reconnect.Automatic || s.keepAlive() }

// idleTimeout returns how long an unused connection stays open; 0 is forever.
func (s *server) idleTimeout() time.Duration {
	if s.lifecycle() != config.LifecycleLazy {
		return 0
	}
	return s.cfg.IdleTimeout
}

// usable returns why the server cannot be used, or nil. s.mu is held, or the
// answer does not depend on it (closed is only read for ops).
func (s *server) usable(op string) error {
	switch {
	case s.closed:
		return &Error{Server: s.cfg.Name, Op: op, Class: ClassClosed, Err: ErrClosed}
	case s.cfg.Disabled:
		return &Error{Server: s.cfg.Name, Op: op, Class: ClassDisabled,
			Err: fmt.Errorf("%w; hint: switchboard enable %s", ErrDisabled, s.cfg.Name)}
	case s.cfg.Err != nil:
		return &Error{Server: s.cfg.Name, Op: op, Class: ClassConfig, Err: s.cfg.Err}
	}
	return nil
}

// acquire returns the live session, connecting if there is none; concurrent
// callers share one connection attempt. The caller must release it. ctx only
// bounds the wait: the attempt is bounded by the request timeout and goes on
// for the others if this caller leaves.
func (s *server) acquire(ctx context.Context, op string) (*session, error) {
	for attempt := 0; ; attempt++ {
		s.mu.Lock()
		if err := s.usable(op); err != nil {
			s.mu.Unlock()
			return nil, err
		}
		if sess := s.sess; sess != nil && sess.ended() {
			// The session ended (its child exited) and ended() has not
			// caught up yet: never hand out a dead session.
			s.detachLocked(sess)
		}
		if sess := s.sess; sess != nil {
			s.inflight++
			s.lastUse = time.Now()
			s.stopIdleLocked()
			s.mu.Unlock()
			return sess, nil
		}
		if onlyConnected(ctx) {
			s.mu.Unlock()
			return nil, withClass(ClassTransport, ErrNotConnected)
		}
		d, err := s.awaitDialUnlock(ctx)
		if err != nil {
			return nil, err
		}
		if d.err != nil {
			return nil, d.err
		}
		if attempt > 0 {
			return nil, withClass(ClassTransport, errors.New("connection lost right after connecting"))
		}
	}
}

// OnlyConnected returns a context under which the pool's operations use
// a server's connection and never start one: a server without one fails
// them with ErrNotConnected. A refresh of what a connected server lists
// uses it: the connection may end between a look at its state and the
// listing, and the listing must not start the server again.
func OnlyConnected(ctx context.Context) context.Context {
	return context.WithValue(ctx, onlyConnectedKey{}, true)
}

type onlyConnectedKey struct{}

func onlyConnected(ctx context.Context) bool {
	only, _ := ctx.Value(onlyConnectedKey{}).(bool)
	return only
}

// awaitDialUnlock starts a connection attempt, or joins the one under
// way, releases s.mu (held by the caller) and waits for the attempt to end
// or ctx to be done.
func (s *server) awaitDialUnlock(ctx context.Context) (*dialCall, error) {
	d, started := s.dialLocked(nil, telemetry.From(ctx))
	s.mu.Unlock()
	if started {
		s.pool.notify(s.cfg.Name)
	}
	select {
	case <-d.done:
		return d, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// release ends an operation's use of sess and arms the idle timer.
func (s *server) release(sess *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight--
	s.lastUse = time.Now()
	if s.inflight == 0 && s.sess == sess {
		s.armIdleLocked()
	}
}

// dialLocked returns the connection attempt in flight, or starts one that
// first closes prev. started reports whether it started one.
// from is the span of the operation that starts it, for its trace.
func (s *server) dialLocked(prev *session, from trace.SpanContext) (d *dialCall, started bool) {
	if s.dial != nil {
		return s.dial, false
	}
	d = &dialCall{prev: prev, from: from, done: make(chan struct{}), started: make(chan struct{})}
	if s.closed || !s.pool.goOwned(func() { s.runDial(d) }) {
		d.err = &Error{Server: s.cfg.Name, Op: opConnect, Class: ClassClosed, Err: ErrClosed}
		close(d.done)
		return d, false
	}
	s.dial = d
	s.state = StateConnecting
	return d, true
}

func (s *server) runDial(d *dialCall) {
	if d.prev != nil {
		d.prev.close()
	}
	ctx, cancel := withTimeout(s.pool.ctx, s.timeout)
	defer cancel()
	ctx, span := s.pool.opts.Telemetry.StartConnect(ctx, d.from, s.cfg.Name, string(s.cfg.Type))
	sess, err := s.connect(ctx, d.underway)
	if err != nil {
		err = opError(ctx, s.cfg.Name, opConnect, s.timeout, err, ClassStart)
		span.End(telemetry.OutcomeError, string(classOf(err, ClassStart)))
	} else {
		s.restore(ctx, sess)
		span.End(telemetry.OutcomeOK, "")
	}
	s.finishDial(d, sess, err)
}

// finishDial records the outcome of a connection attempt.
func (s *server) finishDial(d *dialCall, sess *session, err error) {
	s.mu.Lock()
	s.dial = nil
	var discard *session
	if err == nil && s.closed {
		discard, sess = sess, nil
		err = &Error{Server: s.cfg.Name, Op: opConnect, Class: ClassClosed, Err: ErrClosed}
	}
	if err != nil {
		s.failLocked(err)
	} else {
		s.gen++
		s.connAt = time.Now()
		sess.gen = s.gen
		s.sess, s.state, s.lastUse = sess, StateConnected, time.Now()
		s.armIdleLocked()
	}
	d.sess, d.err = sess, err
	close(d.done)
	s.mu.Unlock()

	if discard != nil {
		discard.close()
	}
	s.pool.notify(s.cfg.Name)
	if sess != nil && !s.pool.goOwned(func() { s.watch(sess) }) {
		sess.close()
	}
}

// failLocked records err and moves to failed, or needs-auth.
func (s *server) failLocked(err error) {
	class := classOf(err, ClassTransport)
	s.fail = &failure{class: class, msg: err.Error(), at: time.Now()}
	switch {
	case class == ClassAuth:
		s.state = StateNeedsAuth
	case class == ClassClosed:
		s.state = StateDisconnected
	default:
		s.state = StateFailed
	}
}

// watch waits for sess to end, health-checking it meanwhile if the server is
// kept alive, and then records why it ended.
func (s *server) watch(sess *session) {
	ended := make(chan struct{})
	if !s.pool.goOwned(func() { sess.waitEnd(); close(ended) }) {
		sess.close()
		return
	}
	var tick <-chan time.Time
	if s.keepAlive() {
		t := time.NewTicker(s.pool.opts.PingInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ended:
			s.ended(sess)
			return
		case <-tick:
			s.ping(sess)
		}
	}
}

// ping checks a kept-alive session; a failure drops it.
func (s *server) ping(sess *session) {
	ctx, cancel := withTimeout(s.pool.ctx, s.timeout)
	defer cancel()
	if err := sess.cs.Ping(ctx, nil); err != nil && s.pool.ctx.Err() == nil {
		if auth := sess.takeAuth(); auth != nil {
			err = opError(ctx, s.cfg.Name, "checking health", s.timeout, auth, ClassAuth)
			s.log.Warn("health check failed", "error", err)
			s.authLost(sess, err)
			return
		}
		err = opError(ctx, s.cfg.Name, "checking health", s.timeout, err, ClassTransport)
		s.log.Warn("health check failed", "error", err)
		sess.drop(err)
	}
}

// ended handles the end of sess: if it was the live session, the server is
// failed (or disconnected), and reconnects automatically if configured.
func (s *server) ended(sess *session) {
	sess.close()
	s.mu.Lock()
	current := s.detachLocked(sess)
	s.mu.Unlock()
	if current {
		s.log.Warn("connection lost", "error", sess.endErr)
		s.pool.notify(s.cfg.Name)
	}
}

// detachLocked makes the server forget sess, which has ended, if it is
// still the live session, and reports whether it was. It runs with s.mu
// held, from ended or from an acquire that got to the ended session first.
func (s *server) detachLocked(sess *session) bool {
	if s.sess != sess {
		return false
	}
	reason := sess.endErr
	s.sess = nil
	s.stopIdleLocked()
	s.failLocked(withClass(classOf(reason, ClassTransport), reason))
	if s.autoReconnect() {
		s.startReconnectLocked()
	}
	return true
}

func (s *server) armIdleLocked() {
	d := s.idleTimeout()
	if d <= 0 || s.closed {
		return
	}
	if s.idle == nil {
		s.idle = time.AfterFunc(d, func() { s.pool.goOwned(s.closeIfIdle) })
	} else {
		s.idle.Reset(d)
	}
}

func (s *server) stopIdleLocked() {
	if s.idle != nil {
		s.idle.Stop()
	}
}

// closeIfIdle closes the session if it has not been used for the idle timeout.
func (s *server) closeIfIdle() {
	s.mu.Lock()
	sess := s.sess
	if sess == nil || s.inflight > 0 || s.closed {
		s.mu.Unlock()
		return
	}
	if left := s.idleTimeout() - time.Since(s.lastUse); left > 0 {
		s.idle.Reset(left)
		s.mu.Unlock()
		return
	}
	s.sess, s.state = nil, StateDisconnected
	s.mu.Unlock()
	s.log.Debug("closing idle connection")
	s.pool.notify(s.cfg.Name)
	sess.close()
}

// shutdown closes the server for good: its session, its connection attempt
// and its reconnect loop.
func (s *server) shutdown() {
	s.mu.Lock()
	s.closed = true
	sess, d := s.sess, s.dial
	s.sess = nil
	s.stopIdleLocked()
	s.stopReconnectLocked()
	if s.state == StateConnected || s.state == StateConnecting {
		s.state = StateDisconnected
	}
	s.mu.Unlock()
	if sess != nil {
		sess.close()
	}
	if d != nil {
		<-d.done // the pool's context is cancelled: it ends soon
	}
}

// connectedOrDialing reports whether the server has a session or a
// connection attempt: whether shutting it down has anything to wait for.
func (s *server) connectedOrDialing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess != nil || s.dial != nil
}

// kill kills every child of the server at once.
func (s *server) kill() {
	s.mu.Lock()
	procs := make([]*process, 0, len(s.procs))
	for p := range s.procs {
		procs = append(procs, p)
	}
	s.mu.Unlock()
	for _, p := range procs {
		p.kill()
	}
}

func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.cfg.Name, State: s.state, Tools: -1, Generation: s.gen, ConnAt: s.connAt}
	if s.fail != nil {
		st.ErrorClass, st.Error, st.ErrorAt = s.fail.class, s.fail.msg, s.fail.at
	}
	if c := s.lists[kindTools]; c.ok {
		st.Tools = c.len
	}
	if s.sess != nil {
		st.Protocol, st.Fallback = s.sess.protocol, s.overSSE
		if s.sess.proc != nil {
			st.PID = s.sess.proc.serverPid()
		}
	}
	return st
}

func (s *server) stderrTail() string {
	s.mu.Lock()
	r := s.stderr
	s.mu.Unlock()
	if r == nil {
		return ""
	}
	return string(r.Bytes())
}
