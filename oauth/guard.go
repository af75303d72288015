package oauth

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/origin"
	"github.com/switchboard-mcp/switchboard/internal/printable"
)

// Discovery learns URLs from a server's answers (the challenge's
// resource_metadata, the authorization servers its metadata names, the
// endpoints theirs name) and fetches them: a hostile server could point
// Switchboard at an address inside the user's network (SSRF), such as a
// cloud metadata service or an admin port on loopback. go-sdk's oauthex
// guards against that only with a client whose transport it may take over
// (one that sets no DialContext), which the pool's transport is not.
//
// So every request a Handler makes (discovery, registration, token,
// revocation) goes through a guard, whatever client it was given: it
// refuses a destination in a non-public class of addresses (loopback,
// private, link-local) unless the MCP server itself is at an address of
// that class, as a local development server on 127.0.0.1 is. It checks the
// URL's host when it is an address, and the address each connection
// reached, before anything is sent on it, so that a name that resolves to
// an internal address (DNS rebinding) is refused too. A request through a
// proxy, or a transport that is not an *http.Transport, is checked by
// resolving its name first: the best that can be done when someone else
// dials.
//
// The guard's client also refuses to carry a request with a body (a token,
// registration or revocation request: client secrets, codes, tokens) to
// another origin by a redirect, and a redirect from https to http.

// An addrClass is a class of IP addresses, by who can reach them.
type addrClass uint8

const (
	classPublic    addrClass = iota
	classLoopback            // 127/8, ::1, and 0/8 and ::, which reach this machine
	classPrivate             // RFC 1918, RFC 4193 (fc00::/7), RFC 6598 (100.64/10)
	classLinkLocal           // 169.254/16 (cloud metadata services), fe80::/10
	classSpecial             // multicast, broadcast, 240/4
)

var classNames = [...]string{"public", "loopback", "private", "link-local", "reserved"}

func (c addrClass) String() string { return classNames[c] }

var (
	cgnat    = netip.MustParsePrefix("100.64.0.0/10")
	thisNet  = netip.MustParsePrefix("0.0.0.0/8")
	reserved = netip.MustParsePrefix("240.0.0.0/4") // 255.255.255.255 too
)

// classify returns the class of ip; an IPv4 address mapped into IPv6 is
// the IPv4 address.
func classify(ip netip.Addr) addrClass {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback(), ip.IsUnspecified(), thisNet.Contains(ip):
		return classLoopback
	case ip.IsPrivate(), cgnat.Contains(ip):
		return classPrivate
	case ip.IsLinkLocalUnicast():
		return classLinkLocal
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast(), reserved.Contains(ip):
		return classSpecial
	}
	return classPublic
}

// A classSet is a set of address classes.
type classSet uint8

func (s classSet) has(c addrClass) bool { return c == classPublic || s&(1<<c) != 0 }

// hostClass returns the class of a URL's host when the host says it
// without a lookup: an IP address, or localhost (RFC 6761).
func hostClass(host string) (addrClass, bool) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return classify(ip), true
	}
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return classLoopback, true
	}
	return 0, false
}

// A guard is the http.RoundTripper of a Handler's requests (see above).
type guard struct {
	serverHost string            // the MCP server's host
	base       http.RoundTripper // sends what direct does not
	direct     *http.Transport   // base's clone that checks each connection; nil when base is not an *http.Transport

	mu    sync.Mutex
	near  classSet // the classes of the server's own addresses, once known
	known bool
}

// guarded returns a client that makes c's requests for the MCP server at
// serverURL through a guard.
func guarded(c *http.Client, serverURL string) *http.Client {
	g := &guard{base: c.Transport}
	if u, err := url.Parse(serverURL); err == nil {
		g.serverHost = u.Hostname()
	}
	if g.base == nil {
		g.base = http.DefaultTransport
	}
	if t, ok := g.base.(*http.Transport); ok {
		g.direct = t.Clone()
		g.direct.Proxy = nil // proxied requests go through base
		// Connections are not reused: few requests, and nothing left
		// behind when the handler goes.
		g.direct.DisableKeepAlives = true
		inner := t.DialContext
		if inner == nil {
			inner = (&net.Dialer{}).DialContext
		}
		g.direct.DialContext = g.checkConn(inner)
		if t.DialTLSContext != nil {
			g.direct.DialTLSContext = g.checkConn(t.DialTLSContext)
		}
	}
	return &http.Client{
		Transport:     g,
		CheckRedirect: checkRedirect(c.CheckRedirect),
		Jar:           c.Jar,
		Timeout:       c.Timeout,
	}
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	host := req.URL.Hostname()
	if g.isServer(host) {
		// Where the server's connection goes anyway: nothing more to reach.
		return g.base.RoundTrip(req)
	}
	near := g.nearClasses(ctx)
	c, literal := hostClass(host)
	if literal && !near.has(c) {
		return nil, g.refusal(req.URL, c)
	}
	if g.direct != nil && !g.proxied(req) {
		return g.direct.RoundTrip(req) // checkConn checks the address reached
	}
	if !literal {
		// Someone else dials: check what the name resolves to here.
		ips, err := lookup(ctx, host)
		for _, ip := range ips {
			if c := classify(ip); err == nil && !near.has(c) {
				return nil, g.refusal(req.URL, c)
			}
		}
	}
	return g.base.RoundTrip(req)
}

// isServer reports whether host is the MCP server's own, which its
// connection reaches anyway.
func (g *guard) isServer(host string) bool {
	return g.serverHost != "" && lowerASCII(host) == lowerASCII(g.serverHost)
}

// lowerASCII maps A-Z to a-z alone: DNS folds no other letters.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// proxied reports whether req goes through a proxy of base.
func (g *guard) proxied(req *http.Request) bool {
	t, ok := g.base.(*http.Transport)
	if !ok || t.Proxy == nil {
		return false
	}
	u, err := t.Proxy(req)
	return err == nil && u != nil
}

type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// checkConn wraps dial with the check of the address each connection
// reached, before anything is sent on it.
func (g *guard) checkConn(dial dialFunc) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		ap, ok := remoteIP(conn)
		if !ok {
			return conn, nil // not an IP connection: no address to guard
		}
		if c := classify(ap); !g.nearClasses(ctx).has(c) {
			conn.Close()
			host, _, _ := net.SplitHostPort(addr)
			return nil, fmt.Errorf("refusing %s: it resolved to %s, a %s address, and the MCP server %s is not at one: a server's OAuth requests reach into the local network only when it is there itself", printable.Clip(host, 200), ap, c, printable.Clip(g.serverHost, 200))
		}
		return conn, nil
	}
}

func remoteIP(conn net.Conn) (netip.Addr, bool) {
	switch a := conn.RemoteAddr().(type) {
	case *net.TCPAddr:
		ip, ok := netip.AddrFromSlice(a.IP)
		return ip, ok
	case *net.UDPAddr:
		ip, ok := netip.AddrFromSlice(a.IP)
		return ip, ok
	}
	return netip.Addr{}, false
}

func (g *guard) refusal(u *url.URL, c addrClass) error {
	o, _ := origin.Of(u)
	return fmt.Errorf("refusing %s: it is a %s address, and the MCP server %s is not at one: a server's OAuth requests reach into the local network only when it is there itself", o, c, printable.Clip(g.serverHost, 200))
}

// lookupTimeout bounds the guard's own lookups: where the local resolver
// does not answer (behind a proxy that resolves for everyone), a request
// must not wait for it long.
const lookupTimeout = 5 * time.Second

func lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(ctx, lookupTimeout)
	defer cancel()
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// nearClasses returns the classes of the MCP server's own addresses: those
// its OAuth requests may reach besides public ones. A name that does not
// resolve here has none; it is looked up once per guard.
func (g *guard) nearClasses(ctx context.Context) classSet {
	g.mu.Lock()
	if g.known {
		defer g.mu.Unlock()
		return g.near
	}
	g.mu.Unlock()
	var near classSet
	if c, ok := hostClass(g.serverHost); ok {
		near = 1 << c
	} else if g.serverHost != "" {
		ips, err := lookup(ctx, g.serverHost)
		if err != nil && ctx.Err() != nil {
			return 0 // the caller gave up: ask again next time
		}
		for _, ip := range ips {
			near |= 1 << classify(ip)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.near, g.known = near, true
	return near
}

// checkRedirect is the redirect policy of a guarded client: at most ten
// redirects, none from https to http, and none of a request with a body
// (token, registration, revocation) to another origin; then next's, if
// any. The guard checks the address of every hop.
func checkRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first, prev := via[0], via[len(via)-1]
		switch {
		case len(via) >= 10:
			return fmt.Errorf("stopped after %d redirects", len(via))
		case prev.URL.Scheme == "https" && req.URL.Scheme != "https":
			return fmt.Errorf("refusing the redirect from %s to %s: from https to plain http", originOf(prev.URL), originOf(req.URL))
		case first.Method != http.MethodGet && first.Method != http.MethodHead && !origin.Same(first.URL, req.URL):
			return fmt.Errorf("refusing the redirect of a %s from %s to %s: it carries client credentials, a code or a token, which go only to the origin they were sent to", first.Method, originOf(first.URL), originOf(req.URL))
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
}

func originOf(u *url.URL) string {
	o, err := origin.Of(u)
	if err != nil {
		return "a URL without an origin"
	}
	return o.String()
}
