package upstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"go.opentelemetry.io/otel/attribute"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/telemetry"
)

// exitWait bounds how long an error waits for a dying child to be reaped, so
// that it can say how the child ended.
const exitWait = time.Second

// A session is one connection to a server: an initialized go-sdk session and
// what is under it (a child process, or an HTTP transport).
type session struct {
	cs           *mcp.ClientSession
	client       *mcp.Client
	roots        *rootsState // forgets client when the session closes
	gen          uint64
	proc         *process       // stdio; nil for HTTP
	fast         *stdioConn     // stdio: for calls on the fast path (see CallToolRaw)
	rt           *httpTransport // HTTP; nil for stdio
	raw          *httpRaw       // Streamable HTTP: a server's tasks' requests (tasks_http.go)
	protocol     string
	instructions string
	scrub        *scrubber
	cancels      *cancels // the cancellations it owes, for close to wait for
	settle       *settle  // the marks in what it reads

	closeOnce sync.Once
	mu        sync.Mutex
	dropErr   error         // why we dropped it, if we did
	endErr    error         // why it ended; set before done is closed
	done      chan struct{} // closed when it has ended
}

// connect opens a new session: it resolves the server's references, starts
// the transport and negotiates the protocol.
//
// underway is called once the transport is under way: for a stdio server,
// once its process has been started or has failed to start.
func (s *server) connect(ctx context.Context, underway func()) (*session, error) {
	if why := s.cfg.Offline; why != "" {
		return nil, withClass(ClassConfig, offlineError(why))
	}
	res, err := s.cfg.Resolve(config.Lookup{Env: s.pool.opts.Lookup, Secrets: s.pool.opts.Credentials, Commands: commands(ctx)})
	if err != nil {
		return nil, withClass(ClassConfig, err)
	}
	s.mu.Lock()
	fellBack, modern := s.fellBack, s.modern
	s.mu.Unlock()
	version, err := pinnedVersion(s.cfg.ProtocolVersion, s.cfg.Type, fellBack, modern)
	if err != nil {
		return nil, err
	}
	scrub := s.pool.newScrubber(s.cfg, res)
	sess, retry, err := s.open(ctx, res, version, underway)
	if retry == retryRefused {
		// "auto" over stdio speaks 2025-11-25; a server that refuses it is
		// probed for 2026-07-28, now and from then on (pinnedVersion).
		retry = ""
		auto := s.cfg.ProtocolVersion == "" || s.cfg.ProtocolVersion == "auto"
		if auto && !modern && !fellBack && ctx.Err() == nil {
			telemetry.Event(ctx, "retry", attribute.String("switchboard.protocol", modernVersion()))
			s.log.Info("server refused the 2025-11-25 handshake; connecting again to probe for 2026-07-28", "error", scrub.error(err))
			s.mu.Lock()
			s.modern = true
			s.mu.Unlock()
			sess, retry, err = s.open(ctx, res, "", underway)
		}
	}
	if err != nil && retry != "" && ctx.Err() == nil {
		telemetry.Event(ctx, "retry", attribute.String("switchboard.protocol", retry))
		if retry == legacyVersion {
			s.log.Info("server died on the protocol probe; connecting again with the legacy handshake", "version", retry, "error", scrub.error(err))
			s.mu.Lock()
			s.fellBack = true
			s.mu.Unlock()
		} else {
			s.log.Info("server answered the protocol probe late; connecting again with its version pinned", "version", retry, "error", scrub.error(err))
		}
		sess, _, err = s.open(ctx, res, retry, underway)
	}
	if err != nil {
		return nil, scrub.error(err)
	}
	if pinned := exactRevision(s.cfg.ProtocolVersion); pinned != "" && sess.protocol != pinned {
		// Pinned means pinned: a server that does not speak the revision
		// (go-sdk's client falls back to what the server speaks) is not
		// used at another.
		sess.close()
		return nil, withClass(ClassConfig, fmt.Errorf("the server speaks protocol revision %s, not %s, which its protocolVersion pins (hint: pin %q, or say \"auto\")", sess.protocol, pinned, sess.protocol))
	}
	sess.scrub = scrub
	return sess, nil
}

// exactRevision returns the revision a protocolVersion setting pins
// exactly ("2025-06-18"), or "" for auto, latest and legacy.
func exactRevision(setting string) string {
	switch setting {
	case "", "auto", "latest", "legacy":
		return ""
	}
	return setting
}

// open makes one connection attempt with the given protocol version ("" to
// probe). On failure, retry names the version to try once more with, if the
// probe showed which: legacyVersion when a stdio server died on the probe,
// the modern version when it answered the probe late; or, without a probe,
// retryRefused when a stdio server answered initialize with an error.
func (s *server) open(ctx context.Context, res *config.Resolved, version string, underway func()) (sess *session, retry string, err error) {
	st := newSettle()
	client := s.newClient(st)
	opts := &mcp.ClientSessionOptions{ProtocolVersion: version}
	sess = &session{client: client, roots: &s.pool.roots, done: make(chan struct{}), cancels: newCancels(), settle: st}
	switch s.cfg.Type {
	case config.TransportStdio:
		sess.cs, retry, err = s.openStdio(ctx, client, opts, res, sess, underway)
	case config.TransportInProcess:
		underway()
		sess.cs, err = s.openInProcess(ctx, client, opts, sess.cancels, st)
	case config.TransportSocket:
		underway()
		sess.cs, err = s.openSocket(ctx, client, opts, sess)
	default:
		underway()
		sess.cs, err = s.openHTTP(ctx, client, opts, res, sess)
	}
	if err != nil {
		s.pool.roots.forget(client)
		return nil, retry, err
	}
	if r := sess.cs.InitializeResult(); r != nil {
		sess.protocol, sess.instructions = r.ProtocolVersion, r.Instructions
	}
	return sess, "", nil
}

func (s *server) openStdio(ctx context.Context, client *mcp.Client, opts *mcp.ClientSessionOptions, res *config.Resolved, sess *session, underway func()) (*mcp.ClientSession, string, error) {
	env := make(map[string]string, len(res.Env))
	for k, v := range res.Env {
		env[k] = v.Reveal()
	}
	o := &s.pool.opts
	if s.pool.mark != "" {
		env[markEnv] = s.pool.mark
	}
	proc, err := startProcess(s.cfg, mergeEnv(o.BaseEnv, env), procOptions{terminate: o.TerminateTimeout, writeMax: s.timeout, supervise: o.Supervise, stderr: s.stderrLine(), redact: o.Redact, log: s.log})
	if err != nil {
		underway()
		return nil, "", err
	}
	tracked := s.track(proc)
	underway()
	if !tracked {
		proc.close()
		return nil, "", withClass(ClassClosed, ErrClosed)
	}
	sess.proc = proc
	sess.fast = newStdioConn(newLineReader(proc.stdout, o.MaxMessageBytes, s.log), stdinWriter{proc}, sess.settle)
	var conn mcp.Connection = sess.fast
	conn = newReadCapConn(conn, o.MaxReadBytes)
	rc := newRootsConn(conn, proc.errRing)
	conn = rc
	var probe *probeConn
	if opts.ProtocolVersion == "" {
		probe = newProbeConn(conn, s.probeTimeout(), s.timeout/2)
		conn = probe
	}
	cs, err := client.Connect(ctx, cancelTransport{connTransport{conn}, sess.cancels}, opts)
	if err == nil {
		if probe != nil && probe.timedOut.Load() && !probe.answeredLate() {
			// The server ignores the probe: do not wait for it next time.
			s.mu.Lock()
			s.fellBack = true
			s.mu.Unlock()
		}
		s.settleRoots(ctx, client, cs, rc)
		return cs, "", nil
	}
	refused := refusedHandshake(err)
	exited := proc.waitExit(exitWait)
	_ = conn.Close()
	if exited && !refused { // a refusal says why; the exit that follows does not
		err = withClass(ClassStart, fmt.Errorf("starting %q: %w", s.cfg.Command, proc.exitError()))
	}
	if refused {
		err = withClass(ClassStart, fmt.Errorf("starting %q: %w", s.cfg.Command, err))
	}
	switch {
	case probe == nil && refused:
		return nil, retryRefused, err
	case probe == nil:
		return nil, "", err
	case probe.diedProbing():
		return nil, legacyVersion, err
	case probe.answeredLate():
		return nil, modernVersion(), err
	}
	return nil, "", err
}

// track registers a child so that Close can kill it; it reports false once
// the server is closed. The child is forgotten when it has been closed.
func (s *server) track(p *process) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.procs[p] = true
	s.stderr = p.errRing
	s.pool.groups.add(p.pid)
	s.pool.goOwned(func() {
		<-p.closed
		s.pool.groups.remove(p.pid)
		s.mu.Lock()
		delete(s.procs, p)
		s.mu.Unlock()
	})
	return true
}

// openHTTP connects over Streamable HTTP, or legacy SSE for a server of
// type "sse". A server whose definition has a "url" and no "type", and
// whose URL rejects Streamable HTTP's POST outright, is tried once more
// over legacy SSE (see fallback.go).
func (s *server) openHTTP(ctx context.Context, client *mcp.Client, opts *mcp.ClientSessionOptions, res *config.Resolved, sess *session) (*mcp.ClientSession, error) {
	cs, err := s.dialHTTP(ctx, client, opts, res, sess, s.cfg.Type)
	if err == nil || !fallsBack(err) || ctx.Err() != nil {
		s.setOverSSE("", err)
		return cs, err
	}
	var r *refusal
	errors.As(err, &r)
	telemetry.Event(ctx, "retry", attribute.String("switchboard.transport", string(config.TransportSSE)))
	cs, sseErr := s.dialHTTP(ctx, client, opts, res, sess, config.TransportSSE)
	if sseErr != nil {
		return nil, alsoOverSSE(err, sseErr)
	}
	why := fmt.Sprintf("connected over legacy SSE: the URL rejected Streamable HTTP (HTTP %d)", r.answers[0].status)
	s.log.Info(why)
	s.setOverSSE(why, nil)
	return cs, nil
}

// setOverSSE records why the connection just made is over legacy SSE
// after a fallback, "" for none; a failed attempt (err) leaves what the
// last connection was.
func (s *server) setOverSSE(why string, err error) {
	if err != nil {
		return
	}
	s.mu.Lock()
	s.overSSE = why
	s.mu.Unlock()
}

// dialHTTP makes one connection over typ, Streamable HTTP or legacy SSE,
// with the server's headers, OAuth and origin rules. A failure names what
// the URL answered, when that was not MCP (see whatAnswered).
func (s *server) dialHTTP(ctx context.Context, client *mcp.Client, opts *mcp.ClientSessionOptions, res *config.Resolved, sess *session, typ config.Transport) (*mcp.ClientSession, error) {
	o := &s.pool.opts
	endpoint := res.URL.Reveal()
	if endpoint == "" {
		endpoint = s.cfg.URL
	}
	rt, err := newHTTPTransport(bearerNoter{o.HTTPTransport, o.Redact}, endpoint, s.cfg.Redirects, res.Headers, s.probeTimeout(), o.MaxMessageBytes, o.MaxReadBytes)
	if err != nil {
		return nil, err
	}
	rt.probing.Store(opts.ProtocolVersion == "")
	auth, err := s.oauthHandler(res, endpoint, o.Prompt)
	if err != nil {
		return nil, err
	}
	rt.server, rt.oauth, rt.trace = s.cfg.Name, auth != nil, o.Telemetry
	// Not through a cancelTransport: go-sdk's HTTP connection has methods
	// of its own that a wrapper would hide; rt counts the cancellations.
	rt.cancels = sess.cancels
	rt.settle = sess.settle
	cs, err := client.Connect(ctx, httpClientTransport(s.pool.ctx, typ, endpoint, rt, auth), opts)
	rt.probing.Store(false)
	if err != nil {
		return nil, whatAnswered(rt, s.cfg, rt.classify(withClass(ClassTransport, err)))
	}
	sess.rt = rt
	if typ != config.TransportSSE {
		sess.raw = &httpRaw{rt: rt, endpoint: endpoint, auth: auth, sess: sess}
		deliver := s.pool.progressDeliverer(sess)
		rt.deliver.Store(&deliver)
	}
	return cs, nil
}

func (s *server) probeTimeout() time.Duration {
	return min(s.pool.opts.ProbeTimeout, s.timeout/2)
}

// newClient returns a go-sdk client for one connection, from the pool's
// template, with the pool's list_changed handlers and the roots the
// server's configuration offers it (when it offers none, the client does
// not declare the roots capability), taking the connection's marks (st,
// nil for none). The caller makes the pool forget it when the connection
// fails or ends.
func (s *server) newClient(st *settle) *mcp.Client {
	var o mcp.ClientOptions
	if t := s.pool.opts.Client; t != nil {
		o = *t
	}
	offer := rootsOf(s.cfg, s.log)
	caps := &mcp.ClientCapabilities{}
	if o.Capabilities != nil {
		*caps = *o.Capabilities
	}
	caps.RootsV2 = nil
	if offer != nil {
		caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	}
	o.Capabilities = caps
	if o.Logger == nil {
		o.Logger = s.log
	}
	o.ToolListChangedHandler = chain(o.ToolListChangedHandler, func(context.Context, *mcp.ToolListChangedRequest) {
		s.listChanged(kindTools)
	})
	o.ResourceListChangedHandler = chain(o.ResourceListChangedHandler, func(context.Context, *mcp.ResourceListChangedRequest) {
		s.listChanged(kindResources)
		s.listChanged(kindTemplates)
	})
	o.PromptListChangedHandler = chain(o.PromptListChangedHandler, func(context.Context, *mcp.PromptListChangedRequest) {
		s.listChanged(kindPrompts)
	})
	c := mcp.NewClient(&mcp.Implementation{Name: s.pool.opts.ClientName, Version: s.pool.opts.ClientVersion}, &o)
	c.AddReceivingMiddleware(s.pool.opts.ClientMiddleware...)
	c.AddReceivingMiddleware(redactReceived(s.pool.opts.Redact)) // before ClientMiddleware: it hands on only clean data
	// Added last, so run first: every handler and middleware sees which
	// server the message came from (ServerOf), and none sees a mark.
	c.AddReceivingMiddleware(originMiddleware(s.cfg.Name, s.user))
	if st != nil {
		c.AddReceivingMiddleware(st.middleware)
	}
	c.AddSendingMiddleware(redactResults(s.pool.opts.Redact))
	if mw := s.pool.opts.Telemetry.Middleware(s.cfg.Name); mw != nil {
		c.AddSendingMiddleware(mw)
	}
	s.pool.roots.register(c, offer)
	return c
}

// stderrLine returns what receives the server's stderr lines, or nil.
func (s *server) stderrLine() func(string) {
	f := s.pool.opts.Stderr
	if f == nil {
		return nil
	}
	return func(line string) { f(s.cfg.Name, line) }
}

// chain returns a handler calling ours, then theirs if set.
func chain[R any](theirs, ours func(context.Context, R)) func(context.Context, R) {
	if theirs == nil {
		return ours
	}
	return func(ctx context.Context, r R) {
		ours(ctx, r)
		theirs(ctx, r)
	}
}

// waitEnd waits until the session has ended and records why.
func (sess *session) waitEnd() {
	waitErr := sess.cs.Wait()
	var reason error
	switch {
	case sess.proc != nil && sess.proc.waitExit(exitWait):
		reason = withClass(ClassExited, sess.proc.exitError())
	case waitErr != nil && !errors.Is(waitErr, mcp.ErrConnectionClosed):
		reason = withClass(ClassTransport, waitErr)
	default:
		reason = withClass(ClassTransport, errors.New("connection closed by the server"))
	}
	sess.mu.Lock()
	if sess.dropErr != nil {
		reason = sess.dropErr
	}
	sess.endErr = sess.scrub.error(reason)
	sess.mu.Unlock()
	close(sess.done)
}

// drop closes the session because it is broken, with reason as the cause.
func (sess *session) drop(reason error) {
	sess.mu.Lock()
	if sess.dropErr == nil {
		sess.dropErr = reason
	}
	sess.mu.Unlock()
	sess.close()
}

// close closes the session and waits for its child, if any. It is idempotent.
// It first lets go-sdk write the cancellations of requests whose context
// ended (see cancelGrace).
func (sess *session) close() {
	sess.closeOnce.Do(func() {
		sess.cancels.wait()
		sess.roots.forget(sess.client)
		_ = sess.cs.Close()
		if sess.proc != nil {
			sess.proc.close()
		}
	})
}

// reason returns why the session ended, waiting a moment for it to end.
func (sess *session) reason() error {
	t := time.NewTimer(exitWait)
	defer t.Stop()
	select {
	case <-sess.done:
		return sess.endErr
	case <-t.C:
		return nil
	}
}

// A scrubber removes the secret values the pool knows from error text.
// Every server's values go into the pool's one set (Options.Redact), so
// an error of one server that repeats another's secret loses it too.
type scrubber struct{ set *redact.Set }

// newScrubber adds to the pool's set the values that came from
// references: header values and the OAuth client secret always, env
// values and the URL when they held a reference, and the values the
// references resolved to on their own. A URL is replaced by the server's
// address as written.
func (p *Pool) newScrubber(s *config.Server, res *config.Resolved) *scrubber {
	set := p.opts.Redact
	if u := res.URL.Reveal(); u != "" && u != s.URL {
		set.AddAs(u, s.Target())
	}
	for _, v := range res.Headers {
		set.Add(v.Reveal())
	}
	set.Add(res.OAuthClientSecret.Reveal())
	set.Add(res.OAuthClientKey.Reveal())
	for _, line := range strings.Split(res.OAuthClientKey.Reveal(), "\n") { // a line of the key, should one be quoted alone
		if line = strings.TrimSpace(line); len(line) >= 16 && !strings.HasPrefix(line, "-----") {
			set.Add(line)
		}
	}
	for k, v := range res.Env {
		if v.Reveal() != s.Env[k] {
			set.Add(v.Reveal())
		}
	}
	for _, v := range res.Parts {
		set.Add(v.Reveal())
	}
	return &scrubber{set: set}
}

// error returns err with every secret value replaced, keeping its class.
func (sc *scrubber) error(err error) error {
	if err == nil || sc == nil {
		return err
	}
	msg := err.Error()
	clean := sc.set.String(msg)
	if clean == msg {
		return err
	}
	var e *Error
	if errors.As(err, &e) {
		return &Error{Server: e.Server, Op: e.Op, Class: e.Class, Limit: e.Limit, Err: errors.New(sc.set.String(e.Err.Error()))}
	}
	return withClass(classOf(err, ClassTransport), errors.New(clean))
}
