package front

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/identity"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// Serving with identity (HTTPOptions.Identity, settings.identity): the
// gateway is an OAuth resource server (the MCP authorization spec, server
// side). It publishes its Protected Resource Metadata (RFC 9728), refuses
// a request without a token it accepts with 401 and a WWW-Authenticate
// that names that metadata, and runs each client session as the token's
// user: the session may use what the rules grant the user's groups, and
// its audit records name the user. The shared bearer token is not taken
// then.

// wellKnownPRM is the path of the Protected Resource Metadata (RFC 9728
// section 3).
const wellKnownPRM = "/.well-known/oauth-protected-resource"

// userInfoKey is the key of a token's user in auth.TokenInfo.Extra.
const userInfoKey = "switchboard.user"

// userTokenInfoKey is the key of the token itself in auth.TokenInfo.Extra,
// an upstream.UserToken (which never prints): a per-user server whose
// grant is token_exchange exchanges it for the user's token to it.
const userTokenInfoKey = "switchboard.userToken"

// metadataURL is where a client finds the metadata of the resource aud:
// the well-known path, with aud's path after it (RFC 9728 section 3.1).
func metadataURL(aud string) (string, error) {
	u, err := url.Parse(aud)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("settings.identity.audience %q is not an absolute URL (hint: give this gateway's URL, such as https://switchboard.example.com/mcp)", aud)
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: wellKnownPRM + strings.TrimSuffix(u.Path, "/")}).String(), nil
}

// verifier returns the verifier of cfg, with the secret of its
// introspection client looked up as the engine looks up references.
func (s *Server) verifier(cfg *config.Identity) (*identity.Verifier, error) {
	opts := identity.Options{Logger: s.log}
	if in := cfg.Introspection; in != nil {
		env := s.opts.Engine.Lookup
		if env == nil {
			env = os.LookupEnv
		}
		secret, err := in.Secret(env)
		if err != nil {
			return nil, err
		}
		opts.IntrospectionSecret = secret
	}
	return identity.New(cfg, &opts), nil
}

// identityRoutes serves the Protected Resource Metadata on mux, at the
// well-known path and at that path followed by the resource's.
func identityRoutes(mux *http.ServeMux, v *identity.Verifier) error {
	cfg := v.Config()
	meta, err := metadataURL(cfg.Audience)
	if err != nil {
		return err
	}
	h := auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               cfg.Audience,
		AuthorizationServers:   []string{cfg.Issuer},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Switchboard",
	})
	u, _ := url.Parse(meta)
	mux.Handle(wellKnownPRM, h)
	if u.Path != wellKnownPRM {
		mux.Handle(u.Path, h)
	}
	return nil
}

// requireUser lets through a request with an access token v accepts,
// carrying its user (identity.From, and auth.TokenInfoFromContext, which
// go-sdk checks each request of a session against); others get 401 and a
// WWW-Authenticate naming the resource's metadata, and their connection
// is closed.
//
// A token that could not be checked because the authorization server
// failed (identity.ErrUnavailable) is answered 503 with a Retry-After, not
// 401: the token may be good, and the client should not sign in again.
func requireUser(v *identity.Verifier, next http.Handler) http.Handler {
	meta, _ := metadataURL(v.Config().Audience)
	verify := func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		u, exp, err := v.Verify(ctx, token)
		if errors.Is(err, identity.ErrToken) {
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		if err != nil {
			if f, ok := r.Context().Value(unavailableKey{}).(*unavailable); ok && errors.Is(err, identity.ErrUnavailable) {
				// The verifier logged the details: the client is told
				// no more than that (no address of the endpoint).
				f.set = true
				return nil, identity.ErrUnavailable
			}
			return nil, err
		}
		return &auth.TokenInfo{UserID: u.Subject, Expiration: exp, Extra: map[string]any{userInfoKey: u, userTokenInfoKey: upstream.NewUserToken(token)}}, nil
	}
	check := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: meta, ClockSkew: identity.Leeway})
	withUser := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ti := auth.TokenInfoFromContext(r.Context())
		next.ServeHTTP(w, r.WithContext(withUser(r.Context(), ti)))
	})
	inner := check(withUser)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := &unavailable{}
		r = r.WithContext(context.WithValue(r.Context(), unavailableKey{}, f))
		inner.ServeHTTP(&closeOnRefusal{ResponseWriter: w, unavailable: f}, r)
	})
}

// unavailable is set, in a request's context, when its token could not be
// checked because the authorization server failed: go-sdk answers such an
// error 500, which closeOnRefusal makes a 503.
type unavailable struct{ set bool }

type unavailableKey struct{}

// closeOnRefusal closes the connection of a request answered 401 or 403,
// its body unread, and answers 503 in place of the 500 of a token the
// authorization server could not check.
type closeOnRefusal struct {
	http.ResponseWriter
	unavailable *unavailable
}

func (c *closeOnRefusal) WriteHeader(code int) {
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		closeUnread(c.ResponseWriter)
	}
	if code == http.StatusInternalServerError && c.unavailable != nil && c.unavailable.set {
		code = http.StatusServiceUnavailable
		c.Header().Set("Retry-After", "5")
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *closeOnRefusal) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *closeOnRefusal) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// withUser returns ctx carrying the user of ti and their token, if any.
func withUser(ctx context.Context, ti *auth.TokenInfo) context.Context {
	u := userOf(ti)
	if u == nil {
		return ctx
	}
	ctx = identity.With(ctx, u)
	if t, ok := ti.Extra[userTokenInfoKey].(upstream.UserToken); ok {
		ctx = upstream.WithUserToken(ctx, t)
	}
	return ctx
}

func userOf(ti *auth.TokenInfo) *identity.User {
	if ti == nil {
		return nil
	}
	u, _ := ti.Extra[userInfoKey].(*identity.User)
	return u
}

// identify is a receiving middleware: it puts the user of a request's
// token in its context, for the session it runs in (bindUser).
func (s *Server) identify(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ex := req.GetExtra(); ex != nil {
			ctx = withUser(ctx, ex.TokenInfo)
		}
		res, err := next(ctx, method, req)
		if method == "initialize" && err == nil && s.ident.Load() != nil && !statelessRequest(ctx) {
			// The session is its initializer's before the client learns
			// its id from this answer, so before any request of it can
			// reach the doors go-sdk does not guard (the tasks'). Binding
			// it at notifications/initialized alone came too late: go-sdk
			// answers a notification with 202 before it handles it, and
			// the client's next request could come first.
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				s.trackBound(ctx, ss)
			}
		}
		return res, err
	}
}

// newSession returns an engine session for a call outside a client
// session (stateless: ss, if set, is the request's own), as the user of
// ctx when serving with identity.
func (s *Server) newSession(ctx context.Context, ss *mcp.ServerSession) *gateway.Session {
	es := s.eng.NewSession()
	if v := s.ident.Load(); v != nil {
		restrict(v, es, identity.From(ctx), clientName(ss))
	}
	return es
}

// clientName is the name the client of ss gave in its clientInfo.
func clientName(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		return p.ClientInfo.Name
	}
	return ""
}

// trackBound is track, and bindUser to the user of ctx.
func (s *Server) trackBound(ctx context.Context, ss *mcp.ServerSession) *clientSession {
	s.mu.Lock()
	cs := s.track(ss)
	s.mu.Unlock()
	s.bindUser(ctx, ss, cs)
	return cs
}

// bindUser makes cs the session of the user of ctx, the first time a
// request of it names one: go-sdk refuses a session's later requests
// that come from another user (auth.TokenInfo.UserID).
func (s *Server) bindUser(ctx context.Context, ss *mcp.ServerSession, cs *clientSession) {
	v := s.ident.Load()
	if v == nil {
		return
	}
	u := identity.From(ctx)
	s.mu.Lock()
	first := cs.user == nil && u != nil
	if first {
		cs.user = u
	}
	s.mu.Unlock()
	if first {
		restrict(v, cs.es, u, clientName(ss))
	}
}

// restrict gives es the user's grants and names the user in its audit
// records. No user (a request no token named, as a continuation another
// replica forwarded) gets nothing once rules exist.
func restrict(v *identity.Verifier, es *gateway.Session, u *identity.User, client string) {
	grants, ruled := v.Grants(u)
	if ruled {
		es.AllowOnly(grants) // patterns were checked by the config
	}
	if u != nil {
		es.SetPrincipal(gateway.Principal{User: u.Subject, ClientID: u.ClientID, Client: client})
		if ruled {
			cfg, groups := v.Config(), slices.Clone(u.Groups)
			es.ApproveAlso(func(server, tool string) (config.Approval, bool) { return cfg.ApprovalFor(groups, server, tool) })
		}
	}
}

// ownCalls keeps the calls of one user.
func ownCalls(calls []proxy.CallRecord, subject string) []proxy.CallRecord {
	return slices.DeleteFunc(slices.Clone(calls), func(c proxy.CallRecord) bool { return c.User != subject })
}

// grantsFilter is receiving middleware that keeps out of a user's
// tools/list the servers' tools (direct tools, transparent mode's) that
// the rules do not grant them; the gateway's own tools (mcp, mcpScript)
// stay. Calls of the others are refused by the session's allow list.
func (s *Server) grantsFilter(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		v := s.ident.Load()
		if method != "tools/list" || err != nil || v == nil {
			return res, err
		}
		grants, ruled := v.Grants(identity.From(ctx))
		if !ruled {
			return res, err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return filterTools(res, func(t *mcp.Tool) bool {
			server, name := s.single, t.Name
			if dt, ok := s.direct[t.Name]; ok {
				server, name = dt.server, dt.name
			}
			return server == "" || granted(grants, server, name)
		}), nil
	}
}

// granted reports whether grants (mcp__SERVER__GLOB) let a user use a
// server's tool.
func granted(grants []string, server, tool string) bool {
	return slices.ContainsFunc(grants, func(p string) bool {
		srv, glob, ok := config.SplitToolPattern(p)
		return ok && srv == server && config.Glob(glob, tool)
	})
}

// sessionOfUser reports whether ss is u's session: bound to u by an
// earlier request (bindUser). A session not bound yet is no one's.
func (s *Server) sessionOfUser(ss *mcp.ServerSession, u *identity.User) bool {
	if u == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.sessions[ss]
	return cs != nil && cs.user != nil && cs.user.Subject == u.Subject
}
