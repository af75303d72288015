package oauth

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		addr string
		want addrClass
	}{
		{"8.8.8.8", classPublic},
		{"2606:4700::1111", classPublic},
		{"127.0.0.1", classLoopback},
		{"127.8.9.10", classLoopback},
		{"::1", classLoopback},
		{"0.0.0.0", classLoopback},
		{"::", classLoopback},
		{"::ffff:127.0.0.1", classLoopback},
		{"10.1.2.3", classPrivate},
		{"172.16.0.1", classPrivate},
		{"192.168.1.1", classPrivate},
		{"100.64.0.1", classPrivate},
		{"fd00::1", classPrivate},
		{"::ffff:10.0.0.1", classPrivate},
		{"169.254.169.254", classLinkLocal},
		{"fe80::1", classLinkLocal},
		{"fe80::1%eth0", classLinkLocal},
		{"224.0.0.1", classSpecial},
		{"255.255.255.255", classSpecial},
		{"ff02::1", classSpecial},
	} {
		if got := classify(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("classify(%s) = %s, want %s", tt.addr, got, tt.want)
		}
	}
}

// TestHostClass: the hosts whose class shows without a lookup.
func TestHostClass(t *testing.T) {
	for _, tt := range []struct {
		host string
		want addrClass
		ok   bool
	}{
		{"127.0.0.1", classLoopback, true},
		{"localhost", classLoopback, true},
		{"LOCALHOST.", classLoopback, true},
		{"api.localhost", classLoopback, true},
		{"169.254.169.254", classLinkLocal, true},
		{"example.com", 0, false},
		{"localhost.example.com", 0, false},
	} {
		got, ok := hostClass(tt.host)
		if got != tt.want || ok != tt.ok {
			t.Errorf("hostClass(%q) = %s, %v; want %s, %v", tt.host, got, ok, tt.want, tt.ok)
		}
	}
}

// TestGuardRedirects: a guarded client follows a GET to another origin,
// and refuses to take a POST (a token request) there, or from https to
// http; it follows a POST within its origin.
func TestGuardRedirects(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
	}))
	other := func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(seen) }
	defer elsewhere.Close()
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, elsewhere.URL+"/caught", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, "/landed", http.StatusTemporaryRedirect)
		}
	}))
	defer home.Close()
	c := guarded(http.DefaultClient, home.URL+"/mcp")

	resp, err := c.Post(home.URL+"/away", "application/x-www-form-urlencoded", strings.NewReader("client_secret=CANARY"))
	want := "refusing the redirect of a POST from " + home.URL + " to " + elsewhere.URL + ": it carries client credentials, a code or a token, which go only to the origin they were sent to"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("POST to another origin: %v", err)
	}
	if resp != nil {
		resp.Body.Close()
	}
	if got := other(); len(got) != 0 {
		t.Errorf("the other origin received %v", got)
	}
	resp, err = c.Post(home.URL+"/here", "application/x-www-form-urlencoded", strings.NewReader("x=1"))
	if err != nil {
		t.Fatalf("POST within the origin: %v", err)
	}
	resp.Body.Close()
	resp, err = c.Get(home.URL + "/away")
	if err != nil {
		t.Fatalf("GET to another origin: %v", err)
	}
	resp.Body.Close()
	if got := other(); len(got) != 1 || got[0] != "GET /caught" {
		t.Errorf("the other origin received %v, want the GET", got)
	}

	tlsHome := httptest.NewTLSServer(http.RedirectHandler(elsewhere.URL+"/downgraded", http.StatusFound))
	defer tlsHome.Close()
	c = guarded(tlsHome.Client(), tlsHome.URL+"/mcp")
	_, err = c.Get(tlsHome.URL + "/metadata")
	if err == nil || !strings.Contains(err.Error(), "refusing the redirect from "+tlsHome.URL+" to "+elsewhere.URL+": from https to plain http") {
		t.Errorf("https to http: %v", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestGuardNear: a server's OAuth requests may reach public addresses, its
// own host, and the classes of addresses the server itself is at, and no
// others; through a transport that is not an *http.Transport too (a Go
// host's), for a URL whose host is an address.
func TestGuardNear(t *testing.T) {
	for _, tt := range []struct {
		server  string
		allowed []string
		refused []string
	}{
		{"https://mcp.example.com/mcp",
			[]string{"https://8.8.8.8/x", "https://MCP.example.com:8443/.well-known/x", "https://[2606:4700::1111]/"},
			[]string{"http://127.0.0.1:9/x", "http://localhost/x", "http://[::1]/", "https://10.1.2.3/", "https://169.254.169.254/", "https://[fd00::1]/", "http://0.0.0.0:80/", "https://[::ffff:192.168.0.1]/"}},
		{"http://127.0.0.1:8080/mcp",
			[]string{"http://127.0.0.1:9/x", "http://localhost:9/", "https://8.8.8.8/"},
			[]string{"https://10.1.2.3/", "https://169.254.169.254/"}},
		{"http://10.1.2.3/mcp",
			[]string{"https://10.9.9.9/", "https://192.168.1.1/"},
			[]string{"http://127.0.0.1:9/x", "https://169.254.169.254/"}},
	} {
		var reached []string
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			reached = append(reached, r.URL.String())
			return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: r}, nil
		})
		c := guarded(&http.Client{Transport: base}, tt.server)
		for _, u := range tt.allowed {
			resp, err := c.Get(u)
			if err != nil {
				t.Errorf("server %s: GET %s: %v", tt.server, u, err)
				continue
			}
			resp.Body.Close()
		}
		for _, u := range tt.refused {
			if _, err := c.Get(u); err == nil || !strings.Contains(err.Error(), "refusing ") || !strings.Contains(err.Error(), " address, and the MCP server ") {
				t.Errorf("server %s: GET %s: %v, want a refusal", tt.server, u, err)
			}
		}
		if !slices.Equal(reached, tt.allowed) {
			t.Errorf("server %s: reached %v, want %v", tt.server, reached, tt.allowed)
		}
	}
}
