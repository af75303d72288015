// Package origin names the origin of a URL, the scheme, host and port of
// RFC 6454 section 4: the unit Switchboard binds a server's credentials to.
// A server's configured headers and OAuth tokens go only to requests whose
// origin is the one of its configured URL (docs/configuration.md, "Where
// credentials go").
//
// Two URLs have the same origin only when a request to either reaches the
// same place: same scheme, same port (a default port written or not), and
// hosts that differ at most in the case of ASCII letters, or IP addresses
// that are equal. Anything else is another origin, also where it would
// reach the same machine by another way (a name and its address, an IDNA
// name and its punycode, a trailing dot, an IPv4-mapped IPv6 address): a
// false "different" only refuses a redirect, a false "same" would give
// credentials away.
package origin

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/switchboard-mcp/switchboard/internal/printable"
)

// An Origin is the scheme, host and port of an http or https URL, in a
// canonical form: two Origins are the same origin exactly when they are
// equal (==). The zero Origin is no URL's.
type Origin struct {
	Scheme string // "http" or "https"
	Host   string // a name with ASCII letters in lower case, or an IP address in netip's form (IPv6 without brackets)
	Port   string // decimal, without leading zeros; the scheme's default when the URL has none
}

// Of returns the origin of u, an absolute http or https URL with a host.
// User info, path, query and fragment play no part.
func Of(u *url.URL) (Origin, error) {
	scheme := strings.ToLower(u.Scheme)
	var def string
	switch scheme {
	case "http":
		def = "80"
	case "https":
		def = "443"
	default:
		return Origin{}, fmt.Errorf("scheme %q is not http or https", printable.Clip(u.Scheme, 200))
	}
	host := u.Hostname()
	if u.Opaque != "" || host == "" {
		return Origin{}, errors.New("the URL has no host")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.String()
	} else {
		host = lowerASCII(host)
	}
	port := def
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return Origin{}, fmt.Errorf("port %q is not a port number", printable.Clip(p, 200))
		}
		port = strconv.FormatUint(n, 10)
	}
	return Origin{Scheme: scheme, Host: host, Port: port}, nil
}

// Parse returns the origin of the URL s (see Of).
func Parse(s string) (Origin, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Origin{}, errors.New("not a URL")
	}
	return Of(u)
}

// Same reports whether a and b are URLs of the same origin; a URL that
// has no origin is of none.
func Same(a, b *url.URL) bool {
	oa, err := Of(a)
	if err != nil {
		return false
	}
	ob, err := Of(b)
	return err == nil && oa == ob
}

// String returns the origin as scheme://host[:port], the port left out
// when it is the scheme's default, as a browser shows it.
func (o Origin) String() string {
	if o == (Origin{}) {
		return "(no origin)"
	}
	host := o.Host
	if strings.Contains(host, ":") {
		host = "[" + strings.Replace(host, "%", "%25", 1) + "]" // an IPv6 address, its zone escaped
	}
	if (o.Scheme == "http" && o.Port == "80") || (o.Scheme == "https" && o.Port == "443") {
		return o.Scheme + "://" + printable.Clip(host, 200)
	}
	return o.Scheme + "://" + printable.Clip(host, 200) + ":" + o.Port
}

// lowerASCII maps A-Z to a-z and leaves every other byte alone: DNS
// compares ASCII letters without case, and nothing else.
func lowerASCII(s string) string {
	b := []byte(s) // bytewise: a host may hold bytes that are not UTF-8
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
