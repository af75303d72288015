package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/handoff"
	"github.com/switchboard-mcp/switchboard/internal/identity"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/oauth"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// loginTTL is how long a login started by auth-start waits for its
// redirect: as long as any login waits for its browser.
const loginTTL = oauth.DefaultLoginTimeout

// A pendingLogin is an OAuth login started by an auth-start request, for
// a client that cannot open URLs: it runs on the engine's background
// group, waiting for its redirect on its loopback listener, or pasted by
// an auth-complete request of the same session.
type pendingLogin struct {
	owner   *Session // the session that started it, the only one that may complete it
	started time.Time
	hand    *handoff.Handoff
	cancel  context.CancelFunc
	done    chan struct{} // closed when the login ended; err is set then
	err     error
}

// expired reports whether the login has waited longer than loginTTL.
func (p *pendingLogin) expired(now time.Time) bool { return now.Sub(p.started) > loginTTL }

// logins are the logins auth-start started, one per server at most, and
// per server and user when the engine serves users (loginKey).
type logins struct {
	mu sync.Mutex
	m  map[string]*pendingLogin
}

// now is the engine's clock: time.Now unless a test sets e.clock.
func (e *Engine) now() time.Time {
	if e.clock != nil {
		return e.clock()
	}
	return time.Now()
}

// authStart starts an OAuth login of server (replacing one pending) and
// answers its authorization URL, and how to finish it.
func (s *Session) authStart(ctx context.Context, server string) *proxy.Result {
	p := s.e.startLogin(ctx, s, server)
	authURL, callback, err := p.hand.URL(ctx, p.done)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		p.cancel()
		return proxy.ErrorResult(proxy.ActionAuthStart, server, ctx.Err())
	case p.err != nil:
		return proxy.ErrorResult(proxy.ActionAuthStart, server, p.err)
	default: // logged in without a browser (the client credentials grant)
		return s.loggedIn(ctx, proxy.ActionAuthStart, server)
	}
	for _, v := range p.hand.Secrets() {
		s.e.redact.Add(v)
	}
	return proxy.AuthStarted(server, proxy.AuthInfo{AuthorizationURL: authURL, Callback: callback, ExpiresIn: int(loginTTL / time.Second)})
}

// loginKey is the key of a login of server that s starts: the server,
// and the user s acts for, if any (a user's login of a server with
// per-user credentials is theirs; another user's does not replace it).
func loginKey(s *Session, server string) string {
	if u := s.principal().User; u != "" {
		return server + "\x00" + u
	}
	return server
}

// startLogin starts a login of server for s in the background, as the
// user of req (the auth-start request's context), cancelling any other
// login of server auth-start started for the same user.
func (e *Engine) startLogin(req context.Context, s *Session, server string) *pendingLogin {
	ctx, cancel := context.WithCancel(e.ctx)
	if u := identity.From(req); u != nil {
		ctx = identity.With(ctx, u) // a server with per-user credentials logs this user in
		ctx = upstream.WithUserToken(ctx, upstream.UserTokenFrom(req))
	}
	p := &pendingLogin{owner: s, started: e.now(), hand: handoff.New(), cancel: cancel, done: make(chan struct{})}
	key := loginKey(s, server)
	e.logins.mu.Lock()
	if old := e.logins.m[key]; old != nil {
		old.cancel()
	}
	if e.logins.m == nil {
		e.logins.m = map[string]*pendingLogin{}
	}
	e.logins.m[key] = p
	e.logins.mu.Unlock()
	run := func() {
		defer close(p.done)
		defer cancel()
		p.err = e.Login(ctx, server, p.hand.Prompt)
	}
	if !e.bg.Go(run) {
		p.err = errors.New("the engine is closed")
		cancel()
		close(p.done)
	}
	return p
}

// authComplete finishes the login s started with auth-start, with the
// redirect URL or the code the user pasted, and answers once it is done.
func (s *Session) authComplete(ctx context.Context, req *proxy.Request) *proxy.Result {
	server := req.Server
	p, err := s.e.pendingLogin(s, server)
	if err != nil {
		return proxy.ErrorResult(proxy.ActionAuthComplete, server, err)
	}
	select {
	case <-p.done: // the browser reached the listener first, or it failed
		return s.loginEnded(ctx, server, p)
	default:
	}
	code := req.Code
	if req.RedirectURL != "" {
		if u, err := url.Parse(req.RedirectURL); err == nil {
			code = u.Query().Get("code")
		}
		err = p.hand.Complete(req.RedirectURL)
	} else {
		err = p.hand.CompleteCode(req.Code)
	}
	s.e.redact.Add(code)
	if err != nil {
		return proxy.ErrorResult(proxy.ActionAuthComplete, server, fmt.Errorf("completing the login of %q: refusing the redirect: %w; the login still waits", server, err))
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		return proxy.ErrorResult(proxy.ActionAuthComplete, server, ctx.Err())
	}
	return s.loginEnded(ctx, server, p)
}

// pendingLogin returns the login of server that s started and that has
// not expired, or an error that says to start one.
func (e *Engine) pendingLogin(s *Session, server string) (*pendingLogin, error) {
	start := fmt.Sprintf(`start one with {"action": "auth-start", "server": %q}`, server)
	key := loginKey(s, server)
	e.logins.mu.Lock()
	defer e.logins.mu.Unlock()
	p := e.logins.m[key]
	switch {
	case p == nil:
		return nil, fmt.Errorf("completing the login of %q: no login is pending; %s", server, start)
	case p.owner != s:
		return nil, fmt.Errorf("completing the login of %q: the pending login was started by another session, and only it may complete it; %s", server, start)
	case p.expired(e.now()):
		p.cancel()
		delete(e.logins.m, key)
		return nil, fmt.Errorf("completing the login of %q: the login expired (a login waits %s); %s", server, loginTTL, start)
	}
	return p, nil
}

// loginEnded answers for a login that ended, and forgets it.
func (s *Session) loginEnded(ctx context.Context, server string, p *pendingLogin) *proxy.Result {
	key := loginKey(s, server)
	s.e.logins.mu.Lock()
	if s.e.logins.m[key] == p {
		delete(s.e.logins.m, key)
	}
	s.e.logins.mu.Unlock()
	if p.err != nil {
		return proxy.ErrorResult(proxy.ActionAuthComplete, server, fmt.Errorf("%w; start again with {\"action\": \"auth-start\", \"server\": %q}", p.err, server))
	}
	return s.loggedIn(ctx, proxy.ActionAuthComplete, server)
}

// loggedIn answers for a server logged in and connected anew: its status
// line, with its tools.
func (s *Session) loggedIn(ctx context.Context, op proxy.Action, server string) *proxy.Result {
	st, err := s.connectedStatus(ctx, server)
	if err != nil {
		return proxy.ErrorResult(op, server, err)
	}
	return proxy.LoggedIn(op, st, s.e.now())
}

// connect connects a server now, or again when it is connected, and
// answers its status line, with its tools.
func (s *Session) connect(ctx context.Context, server string) *proxy.Result {
	if err := s.e.pool.Reconnect(ctx, server); err != nil {
		return proxy.ErrorResult(proxy.ActionConnect, server, err)
	}
	s.e.onChange(server)
	st, err := s.connectedStatus(ctx, server)
	if err != nil {
		return proxy.ErrorResult(proxy.ActionConnect, server, err)
	}
	return proxy.Connected(st, s.e.now())
}

// connectedStatus returns the status of a server just connected, with the
// number of tools it offers callers now.
func (s *Session) connectedStatus(ctx context.Context, server string) (proxy.ServerStatus, error) {
	ent, err := s.e.entry(ctx, server)
	if err != nil {
		return proxy.ServerStatus{}, err
	}
	tools, _ := s.e.listing(ctx, ent)
	for _, st := range s.e.Status(ctx) {
		if st.Name == server {
			st.Tools = len(tools)
			return st, nil
		}
	}
	return proxy.ServerStatus{}, fmt.Errorf("server %q has no status: this is a bug", server)
}
