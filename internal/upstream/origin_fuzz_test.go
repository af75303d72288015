package upstream

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/origin"
)

// A sentRecorder is the network under an httpTransport: it records what
// it is given to send and answers 200.
type sentRecorder struct{ sent []*http.Request }

func (r *sentRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.sent = append(r.sent, req)
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

const fuzzCanary = "CANARY-fuzz"

// FuzzRedirect holds the transport of an HTTP server to its promise, for
// any configured URL and any URL a request or a redirect goes to: a
// request carries the server's headers (and the session's Authorization
// and cookies) only when its origin is the configured one; a request
// elsewhere is refused, unless it follows a redirect the definition lets
// through, and then it carries none of them; the redirect policy agrees.
func FuzzRedirect(f *testing.F) {
	for _, s := range [][2]string{
		{"https://api.example.com/mcp", "https://api.example.com/other"},
		{"https://api.example.com/mcp", "https://API.example.com:443/mcp"},
		{"https://api.example.com/mcp", "http://api.example.com/mcp"},
		{"https://api.example.com/mcp", "https://api.example.com:8443/mcp"},
		{"https://api.example.com/mcp", "https://evil.example/mcp"},
		{"https://api.example.com/mcp", "https://api.example.com@evil.example/"},
		{"https://api.example.com/mcp", "https://user:pw@api.example.com/"},
		{"https://api.example.com/mcp", "https://api.example.com./mcp"},
		{"https://api.example.com/mcp", "https://sub.api.example.com/mcp"},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8081/mcp"},
		{"http://127.0.0.1:8080/mcp", "http://localhost:8080/mcp"},
		{"http://[::1]:8080/mcp", "http://[0:0::1]:8080/x"},
		{"https://bücher.example/mcp", "https://xn--bcher-kva.example/mcp"},
		{"http://example.com/mcp", "http://example.com:80/mcp"},
	} {
		f.Add(s[0], s[1], false)
		f.Add(s[0], s[1], true)
	}
	def := &config.Server{Name: "api", Type: config.TransportHTTP, URL: "https://api.example.com/mcp", Headers: map[string]string{"X-Api-Key": "${KEY}"}}
	res, err := def.Resolve(config.Lookup{Env: func(string) (string, bool) { return fuzzCanary, true }})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, configured, target string, follow bool) {
		home, err := origin.Parse(configured)
		if err != nil {
			return
		}
		u, err := url.Parse(target)
		if err != nil {
			return
		}
		to, err := origin.Of(u)
		own := err == nil && to == home
		redirects := config.RedirectsSameOrigin
		if follow {
			redirects = config.RedirectsWithoutCredentials
		}
		wire := &sentRecorder{}
		rt, err := newHTTPTransport(wire, configured, redirects, res.Headers, 0, 1<<20, 1<<20)
		if err != nil {
			t.Fatalf("newHTTPTransport(%q): %v", configured, err)
		}
		for _, redirect := range []bool{false, true} {
			req := &http.Request{Method: http.MethodGet, URL: u, Header: http.Header{
				"Authorization": {"Bearer " + fuzzCanary}, "Cookie": {"session=" + fuzzCanary}}}
			var via []*http.Request
			if redirect {
				req.Response = &http.Response{StatusCode: http.StatusTemporaryRedirect}
				via = []*http.Request{{Method: http.MethodGet, URL: &url.URL{Scheme: home.Scheme, Host: home.Host}}}
			}
			wire.sent = nil
			resp, err := rt.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			allowed := own || (redirect && follow)
			switch {
			case allowed != (err == nil):
				t.Fatalf("%q configured, %q (redirect %v, follow %v): err = %v", configured, target, redirect, follow, err)
			case allowed && len(wire.sent) != 1:
				t.Fatalf("%q configured, %q: %d requests sent", configured, target, len(wire.sent))
			case !allowed && len(wire.sent) != 0:
				t.Fatalf("%q configured, %q: refused, yet sent", configured, target)
			}
			for _, sent := range wire.sent {
				if carries := holdsCanary(sent.Header); carries != own {
					t.Fatalf("%q configured, %q (own origin %v): the request carries the credentials: %v", configured, target, own, carries)
				}
			}
			if redirect {
				if err := rt.checkRedirect(req, via); (err == nil) != allowed {
					t.Fatalf("%q configured, redirect to %q (follow %v): checkRedirect = %v", configured, target, follow, err)
				}
			}
		}
	})
}

func holdsCanary(h http.Header) bool {
	for k, vs := range h {
		for _, v := range vs {
			if strings.Contains(k, fuzzCanary) || strings.Contains(v, fuzzCanary) {
				return true
			}
		}
	}
	return false
}
