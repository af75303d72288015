package upstream

import (
	"context"
	"sync"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/identity"
	"github.com/switchboard-mcp/switchboard/oauth"
)

// Per-user credentials (team mode, docs/team.md): once the pool serves
// users (SetUserCredentials), a server whose credentials are per user
// (config.Server.UserCredentials) has a connection of its own for each
// signed-in user, made with that user's OAuth tokens, stored under their
// subject. An operation uses the connection of the user its context
// carries (identity.From); one that carries no user is refused, so that
// no one acts with a user's login but that user.

// userServers are the per-user connections of a pool, by server and user.
type userServers struct {
	on     bool // SetUserCredentials(true)
	mu     sync.Mutex
	m      map[userServerKey]*server
	closed bool
}

type userServerKey struct{ server, user string }

// SetUserCredentials makes the pool serve signed-in users: from now on,
// each user has their own connection to, and tokens for, every server
// whose credentials are per user. A gateway serving with
// settings.identity calls it before it serves.
func (p *Pool) SetUserCredentials(on bool) {
	p.users.mu.Lock()
	p.users.on = on
	p.users.mu.Unlock()
}

// serverFor returns the server an operation in ctx uses: the configured
// one, or, for a server with per-user credentials, the connection of the
// user ctx carries (made on first use).
func (p *Pool) serverFor(ctx context.Context, name, op string) (*server, error) {
	s, err := p.server(name, op)
	if err != nil {
		return nil, err
	}
	p.users.mu.Lock()
	defer p.users.mu.Unlock()
	if !p.users.on || !s.cfg.UserCredentials(true) {
		return s, nil
	}
	u := identity.From(ctx)
	if u == nil || u.Subject == "" {
		return nil, &Error{Server: name, Op: op, Class: ClassAuth, Err: &oauth.NeedsLoginError{Server: name, Reason: noUserReason}}
	}
	if p.users.closed {
		return nil, &Error{Server: name, Op: op, Class: ClassClosed, Err: ErrClosed}
	}
	k := userServerKey{name, u.Subject}
	us := p.users.m[k]
	if us == nil {
		us = newServer(p, s.cfg)
		us.user, us.userTok = u.Subject, &userToken{}
		if p.users.m == nil {
			p.users.m = map[userServerKey]*server{}
		}
		p.users.m[k] = us
	}
	us.userTok.set(userTokenFrom(ctx)) // the same user's: ctx carries both
	return us, nil
}

// noUserReason says why a server with per-user credentials is not used
// without a user.
const noUserReason = "each user logs in to it with their own account (perUser), and this request comes from no signed-in user"

// perUser reports whether the pool serves users and cfg's credentials are
// per user.
func (p *Pool) perUser(cfg *config.Server) bool {
	p.users.mu.Lock()
	defer p.users.mu.Unlock()
	return p.users.on && cfg.UserCredentials(true)
}

// Connected reports whether the connection an operation in ctx would use
// is connected: the server's, or for a server with per-user credentials,
// the connection of the user ctx carries. It never connects.
func (p *Pool) Connected(ctx context.Context, name string) bool {
	s, err := p.serverFor(ctx, name, "")
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == StateConnected
}

// closeUsers closes the pool to new per-user connections and returns
// those there are.
func (p *Pool) closeUsers() []*server {
	p.users.mu.Lock()
	defer p.users.mu.Unlock()
	p.users.closed = true
	out := make([]*server, 0, len(p.users.m))
	for _, s := range p.users.m {
		out = append(out, s)
	}
	return out
}

// connUserKey carries the user whose own connection something comes
// from.
type connUserKey struct{}

// ConnUser returns the signed-in user (a subject) whose own connection
// (per-user credentials) ctx's request comes from: a server's request to
// the client (as ServerOf names the server), or the Prompter call of the
// connection's login. "" is a shared connection. What a user's connection
// asks, and the authorization URL of a user's login, go to that user
// alone.
func ConnUser(ctx context.Context) string {
	u, _ := ctx.Value(connUserKey{}).(string)
	return u
}

func withConnUser(ctx context.Context, user string) context.Context {
	if user == "" {
		return ctx
	}
	return context.WithValue(ctx, connUserKey{}, user)
}

// forUser returns prompt, telling it (ConnUser) whose login it takes to
// the authorization URL.
func forUser(prompt oauth.Prompter, user string) oauth.Prompter {
	if prompt == nil || user == "" {
		return prompt
	}
	return func(ctx context.Context, server, authURL string) (string, error) {
		return prompt(withConnUser(ctx, user), server, authURL)
	}
}
