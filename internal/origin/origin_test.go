package origin

import (
	"net/netip"
	"net/url"
	"strconv"
	"testing"
)

func TestSame(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{"https://example.com/mcp", "https://example.com/other?x=1#f", true},
		{"https://example.com/mcp", "https://EXAMPLE.com/mcp", true},
		{"HTTPS://example.com/", "https://example.com/", true},
		{"https://example.com/", "https://example.com:443/", true},
		{"http://example.com/", "http://example.com:80/", true},
		{"http://example.com:080/", "http://example.com/", true},
		{"https://user:pass@example.com/", "https://example.com/", true},
		{"https://example.com@evil.example/", "https://example.com/", false},
		{"https://example.com/", "http://example.com/", false},
		{"http://example.com:443/", "https://example.com/", false},
		{"https://example.com/", "https://example.com:8443/", false},
		{"http://127.0.0.1:1000/", "http://127.0.0.1:1001/", false},
		{"http://127.0.0.1/", "http://localhost/", false},
		{"https://example.com/", "https://example.com./", false},
		{"https://example.com/", "https://api.example.com/", false},
		{"https://[::1]:8080/", "https://[0:0::1]:8080/", true},
		{"https://[::1]/", "https://[::1]:443/", true},
		{"https://[::ffff:127.0.0.1]/", "https://127.0.0.1/", false},
		{"https://[fe80::1%25eth0]/", "https://[fe80::1%25eth1]/", false},
		{"https://bücher.example/", "https://xn--bcher-kva.example/", false},
		{"https://bücher.example/", "https://bücher.example/x", true},
		{"https://\u212aelvin.example/", "https://kelvin.example/", false}, // the Kelvin sign folds to k in Unicode, not in DNS
		{"ftp://example.com/", "ftp://example.com/", false},
		{"https:///path", "https:///path", false},
		{"https://example.com:0/", "https://example.com:0/", false},
		{"https://example.com:65536/", "https://example.com:65536/", false},
	} {
		a, err1 := url.Parse(tt.a)
		b, err2 := url.Parse(tt.b)
		if err1 != nil || err2 != nil {
			t.Fatalf("parse %q, %q: %v, %v", tt.a, tt.b, err1, err2)
		}
		if got := Same(a, b); got != tt.same {
			t.Errorf("Same(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"https://Example.com:443/mcp":   "https://example.com",
		"http://127.0.0.1:8080/x":       "http://127.0.0.1:8080",
		"https://[::1]:8443/":           "https://[::1]:8443",
		"http://[0:0::1]/":              "http://[::1]",
		"https://u:p@example.com:8443/": "https://example.com:8443",
		"https://[fe80::1%25eth0]/":     "https://[fe80::1%25eth0]",
	} {
		o, err := Parse(in)
		if err != nil || o.String() != want {
			t.Errorf("Parse(%q).String() = %q, %v; want %q", in, o.String(), err, want)
		}
	}
	for in, want := range map[string]string{
		"ftp://example.com/":     `scheme "ftp" is not http or https`,
		"https:opaque":           "the URL has no host",
		"https://example.com:0/": `port "0" is not a port number`,
		"::":                     "not a URL",
	} {
		if _, err := Parse(in); err == nil || err.Error() != want {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
}

// FuzzSameOrigin holds Same to what a request reaches: URLs judged the
// same have the same scheme, the same port (the default filled in), and
// hosts equal but for the case of ASCII letters, or equal IP addresses;
// and Same does not depend on user info, the case of ASCII letters in the
// host, or whether the default port is written, while another scheme or
// another port is another origin.
func FuzzSameOrigin(f *testing.F) {
	for _, s := range [][2]string{
		{"https://example.com/mcp", "https://EXAMPLE.com:443/x"},
		{"http://user:pw@127.0.0.1:8080/", "http://127.0.0.1:8080"},
		{"https://[::1]:443/", "https://[0::1]/"},
		{"https://example.com./", "https://example.com/"},
		{"https://bücher.example/", "https://xn--bcher-kva.example/"},
		{"https://[fe80::1%25eth0]/", "https://[fe80::1%25ETH0]/"},
		{"http://example.com:080/", "http://example.com:80/"},
		{"https://a.example@b.example/", "https://a.example/"},
		{"HTTP://EXAMPLE.COM/", "http://example.com/"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, sa, sb string) {
		a, err1 := url.Parse(sa)
		b, err2 := url.Parse(sb)
		if err1 != nil || err2 != nil {
			return
		}
		same := Same(a, b)
		if same != Same(b, a) {
			t.Fatalf("Same(%q, %q) is not symmetric", sa, sb)
		}
		if same && !reachesSame(a, b) {
			t.Fatalf("Same(%q, %q), yet they reach different places", sa, sb)
		}
		oa, err := Of(a)
		if err != nil {
			return
		}
		if !Same(a, a) {
			t.Fatalf("Same(%q, itself) is false", sa)
		}
		m := *a
		m.User = url.UserPassword("someone", "secret")
		if !Same(a, &m) {
			t.Fatalf("user info changes the origin of %q", sa)
		}
		if host := a.Hostname(); !hasZone(host) {
			m = *a
			m.Host = upperASCII(a.Host)
			if !Same(a, &m) {
				t.Fatalf("the case of the host changes the origin of %q", sa)
			}
		}
		if a.Port() == "" {
			m = *a
			m.Host = joinPort(a.Hostname(), oa.Port)
			if !Same(a, &m) {
				t.Fatalf("writing the default port changes the origin of %q", sa)
			}
		}
		m = *a
		m.Scheme = map[string]string{"http": "https", "https": "http"}[oa.Scheme]
		if Same(a, &m) {
			t.Fatalf("another scheme has the origin of %q", sa)
		}
		port, _ := strconv.Atoi(oa.Port)
		m = *a
		m.Host = joinPort(a.Hostname(), strconv.Itoa(port%65535+1))
		if Same(a, &m) {
			t.Fatalf("another port has the origin of %q", sa)
		}
	})
}

// reachesSame reports whether requests to a and b go to the same place by
// the same scheme: what Same must never claim wrongly. It is written apart
// from Of.
func reachesSame(a, b *url.URL) bool {
	if !equalFoldASCII(a.Scheme, b.Scheme) || portOf(a) != portOf(b) || portOf(a) == 0 {
		return false
	}
	ha, hb := a.Hostname(), b.Hostname()
	ia, errA := netip.ParseAddr(ha)
	ib, errB := netip.ParseAddr(hb)
	if errA == nil || errB == nil {
		return errA == nil && errB == nil && ia == ib
	}
	return equalFoldASCII(ha, hb)
}

func portOf(u *url.URL) int {
	if p := u.Port(); p != "" {
		n, _ := strconv.Atoi(p)
		return n
	}
	switch {
	case equalFoldASCII(u.Scheme, "http"):
		return 80
	case equalFoldASCII(u.Scheme, "https"):
		return 443
	}
	return 0
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}

func hasZone(host string) bool {
	for i := 0; i < len(host); i++ {
		if host[i] == '%' {
			return true
		}
	}
	return false
}

func joinPort(host, port string) string {
	if hasColon(host) {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

func hasColon(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			return true
		}
	}
	return false
}
