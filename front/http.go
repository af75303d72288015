package front

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/identity"
	"github.com/switchboard-mcp/switchboard/internal/pgstore"
)

// HTTPOptions configures serving over Streamable HTTP.
type HTTPOptions struct {
	// Token, if set, is the bearer token every request to /mcp, /metrics and /admin/
	// must carry. It is required to listen on an address other than
	// loopback, unless Identity is set.
	Token string
	// Identity, if set, makes the gateway an OAuth resource server
	// (settings.identity; identity.go): /mcp takes the access tokens it
	// accepts in place of Token, each session is its user's, and /metrics
	// and /admin/ need its admin group (a user who is not in it may read
	// their own calls at /admin/calls). The fast lane is off: its calls
	// would not meet go-sdk's check that a session's requests come from
	// its user.
	Identity *config.Identity
	// Stateless serves each request with a session of its own (no
	// Mcp-Session-Id), as the 2026-07-28 revision intends and as replicas
	// behind a load balancer need. Server-to-client requests are then
	// refused, and resource references last one request.
	Stateless bool
	// MaxBodyBytes bounds a request body. Default 4 MiB. A body declared
	// larger is refused at once (413), unread.
	MaxBodyBytes int64
	// BodyTimeout bounds the reading of a request's body, from when its
	// headers have arrived: a slower body is refused (408) and its
	// connection closed. Responses are not bounded: an event stream lasts
	// as long as it must. Default DefaultBodyTimeout.
	BodyTimeout time.Duration
	// IdleTimeout is how long Serve keeps a connection that carries no
	// request open. Default DefaultIdleTimeout.
	IdleTimeout time.Duration
	// TrustedOrigins are origins (scheme://host[:port]) besides the
	// server's own that browsers may call it from.
	TrustedOrigins []string
	// Metrics, if set, is served at /metrics.
	Metrics *Metrics
	// Admin, if set, is served at /admin/ (see Admin), behind Token.
	Admin *Admin
	// Ready, if set, is asked by /readyz (with a 2-second deadline) whether
	// what the server needs is there: the store reachable, say.
	Ready func(context.Context) error
	// NoFastLane serves every request through go-sdk, as before the fast
	// lane (see fastLane); for comparison and troubleshooting.
	NoFastLane bool
	// Registry, if set, says where the other replicas are: the
	// continuation of a call suspended on one of them is forwarded there.
	Registry Registry
	// StoreKey, required with Registry, is settings.store.key, which every
	// replica shares: a key derived from it signs the requests this replica
	// forwards to another and checks those forwarded to it, which carry
	// this signature in place of the client's credentials
	// (ForwardAuthHeader).
	StoreKey []byte
}

// sessionTimeout is how long a client that vanishes without ending its
// session is remembered without a request; its calls in flight end then,
// or at their request timeout, whichever comes first.
const sessionTimeout = 30 * time.Minute

// ErrNeedToken is returned by CheckListen for an address off loopback
// without a token.
var ErrNeedToken = errors.New("refusing to listen off loopback without a bearer token")

// ErrShortToken is returned by CheckListen for an address off loopback
// with a token shorter than MinTokenBytes.
var ErrShortToken = errors.New("refusing to listen off loopback with a short bearer token")

// MinTokenBytes is the shortest bearer token accepted off loopback. The
// token is all that stands between the network and every configured
// server, and anyone who reaches the port may guess as fast as the server
// answers: 16 random bytes (128 bits) put guessing out of reach, while a
// word or a short PIN would not.
const MinTokenBytes = 16

// tokenHint says how to make a good token.
const tokenHint = "hint: make one with openssl rand -hex 32 > ~/.config/switchboard/token (or head -c 32 /dev/urandom | base64), then give --token-file ~/.config/switchboard/token"

// CheckListen checks that addr may be served with the given token: an
// address that is not loopback (including an empty host, which means every
// interface) needs one of at least MinTokenBytes.
func CheckListen(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("invalid address %q: %w (hint: use HOST:PORT such as 127.0.0.1:8080)", addr, err)
	}
	switch {
	case isLoopback(host):
		return nil
	case token == "":
		return fmt.Errorf("%w: %q is reachable from other machines (hint: give --token-file FILE or SWITCHBOARD_TOKEN, or listen on 127.0.0.1)", ErrNeedToken, addr)
	case len(token) < MinTokenBytes:
		return fmt.Errorf("%w: the token is %d bytes, and %q, reachable from other machines, needs at least %d (%s)", ErrShortToken, len(token), addr, MinTokenBytes, tokenHint)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler returns the HTTP handler: Streamable HTTP at /mcp, /healthz,
// /readyz, and /metrics when metrics are set. Requests to every route but
// /healthz are checked, before their body is read, for a loopback Host
// when they arrive on loopback (DNS rebinding) and for a same-site or
// trusted Origin; those to /mcp and /metrics for the bearer token too. A
// refused request's connection is closed. Bodies are read within
// BodyTimeout and bounded by MaxBodyBytes (see bodyGuard).
func (s *Server) Handler(opts HTTPOptions) (http.Handler, error) {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Stateless:                    opts.Stateless,
		Logger:                       s.log,
		MaxRequestBodyBytes:          opts.MaxBodyBytes,
		PropagateRequestCancellation: true,
		SessionTimeout:               sessionTimeout,
	})
	cop := http.NewCrossOriginProtection()
	for _, o := range opts.TrustedOrigins {
		if err := cop.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("trusted origin %q: %w", o, err)
		}
	}
	var fwd *forwarder
	if opts.Registry != nil {
		if len(opts.StoreKey) == 0 {
			return nil, errors.New("front: HTTPOptions.Registry needs the StoreKey")
		}
		fwd = newForwarder(s.opts.ReplicaID, pgstore.DeriveKey(opts.StoreKey, forwardKeyPurpose), opts.Registry)
	}
	limit := opts.MaxBodyBytes
	if limit <= 0 {
		limit = mcp.DefaultMaxRequestBodyBytes
	}
	var inner http.Handler = h
	if opts.Stateless {
		inner = withStateless(h)
	} else {
		inner = sessionGone(h)
	}
	var ident *identity.Verifier
	if opts.Identity != nil {
		var err error
		if ident, err = s.verifier(opts.Identity); err != nil {
			return nil, err
		}
		s.ident.Store(ident)
		s.eng.ServeUsers()
	}
	if !opts.NoFastLane {
		l := newFastLane(s, inner, limit, sessionTimeout, opts.Stateless)
		s.lane.Store(l)
		inner = l
	}
	inner = s.taskHTTP(inner, opts.Stateless)
	idle := opts.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	s.idle.Store(int64(idle))
	bodyTimeout := opts.BodyTimeout
	if bodyTimeout <= 0 {
		bodyTimeout = DefaultBodyTimeout
	}
	// Every route but /healthz checks Host, Origin and, where it has one,
	// the token before its body is read (guarded); /mcp then reads the
	// body whole (bodyGuard).
	mux := http.NewServeMux()
	checked := bodyGuard(limit, s.admit(inner, fwd, limit))
	var fwdKey []byte
	if fwd != nil {
		fwdKey = fwd.key
	}
	// A request another replica forwarded carries its signature in place
	// of the token (acceptForwarded): it meets the same checks but that.
	authed := guarded(opts.Token, cop, opts.TrustedOrigins, checked)
	if ident != nil {
		if err := identityRoutes(mux, ident); err != nil {
			return nil, err
		}
		authed = guarded("", cop, opts.TrustedOrigins, requireUser(ident, checked))
	}
	mux.Handle("/mcp", acceptForwarded(s.opts.ReplicaID, fwdKey, authed,
		guarded("", cop, opts.TrustedOrigins, checked)))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("/readyz", guarded("", nil, opts.TrustedOrigins, s.readyz(opts.Ready)))
	if opts.Metrics != nil {
		opts.Metrics.attach(s.eng)
		var m http.Handler = guarded(opts.Token, nil, opts.TrustedOrigins, opts.Metrics)
		if ident != nil {
			m = guarded("", nil, opts.TrustedOrigins, requireUser(ident, adminOnly(ident, opts.Metrics)))
		}
		mux.Handle("/metrics", m)
	}
	if opts.Admin != nil {
		s.adminHandle(mux, opts.Admin, opts.Token, opts.TrustedOrigins, ident)
	}
	return deadlines(bodyTimeout, mux), nil
}

// bearer requires "Authorization: Bearer TOKEN" when token is set.
func bearer(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="switchboard"`)
			refuse(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// originCheck refuses a request whose Origin names another host than the
// one it was sent to, for every method: a browser page elsewhere must not
// drive the gateway, not even with a GET stream.
func originCheck(trusted []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !slices.Contains(trusted, o) {
			host := strings.TrimPrefix(strings.TrimPrefix(o, "http://"), "https://")
			if host != r.Host {
				refuse(w, http.StatusForbidden, "cross-origin request refused")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
