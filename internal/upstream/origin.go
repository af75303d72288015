package upstream

import (
	"fmt"
	"net/http"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/origin"
)

// maxRedirects bounds the redirects of one request, as net/http does.
const maxRedirects = 10

// A server's credentials (its configured headers, its OAuth token) go only
// to its own origin: the scheme, host and port of its configured URL. Go's
// http.Client copies the headers of the first request to every redirect,
// Authorization too when the new host is the same name (another port,
// http instead of https) or a subdomain, and a RoundTripper that adds
// headers adds them on every hop. So the transport itself decides, for
// every request it sends, whether it is on the server's origin, and adds
// them only then; and the client refuses a redirect elsewhere, unless the
// server's definition lets it through without them ("redirects":
// "follow-without-credentials").

// credentialHeaders are the headers that are never sent to another origin,
// besides the server's configured ones: those a request to the server may
// carry that are credentials.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Cookie2"}

// onOrigin reports whether req goes to the server's origin, where its
// credentials may go. A request elsewhere is refused with an error that
// names both origins, unless it follows a redirect and the server's
// definition lets such a redirect through: then own is false and err nil,
// and the request goes without the credentials.
func (t *httpTransport) onOrigin(req *http.Request) (own bool, err error) {
	o, perr := origin.Of(req.URL)
	if perr == nil && o == t.origin {
		return true, nil
	}
	target := o.String()
	if perr != nil {
		target = fmt.Sprintf("a URL without an origin (%v)", perr)
	}
	switch {
	case req.Response == nil:
		// Not a redirect: go-sdk sends a server's requests to its URL, and
		// only the legacy SSE transport to another, the one its endpoint
		// event names (checkEndpoint refuses it first).
		return false, t.foreignEndpoint(target)
	case t.redirects != config.RedirectsWithoutCredentials:
		return false, withClass(ClassProtocol, fmt.Errorf("refusing the redirect from %s to %s: the server's headers and token go only to its own origin; hint: if you trust %s, make it the server's url, or set \"redirects\": \"follow-without-credentials\" in the server's definition", t.origin, target, target))
	}
	return false, nil
}

// checkEndpoint checks the data of a legacy SSE stream's endpoint event,
// the URL go-sdk will post the session's messages to, resolved as go-sdk
// resolves it (against the server's URL): it must be on the server's
// origin, whatever the redirects rule.
func (t *httpTransport) checkEndpoint(data []byte) error {
	u, err := t.home.Parse(string(data))
	if err != nil {
		return withClass(ClassProtocol, fmt.Errorf("the server's SSE endpoint event holds no URL: %v", err))
	}
	if o, err := origin.Of(u); err != nil {
		return t.foreignEndpoint(fmt.Sprintf("a URL without an origin (%v)", err))
	} else if o != t.origin {
		return t.foreignEndpoint(o.String())
	}
	return nil
}

func (t *httpTransport) foreignEndpoint(target string) error {
	return withClass(ClassProtocol, fmt.Errorf("refusing the SSE endpoint %s: it is not on the server's origin %s, and a server's messages and credentials go only to its own origin (hint: the server must serve its event stream and its message endpoint on one origin)", target, t.origin))
}

// checkRedirect is the CheckRedirect of the server's http.Client: it
// refuses a redirect to another origin (see onOrigin), and stops after
// maxRedirects.
func (t *httpTransport) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return withClass(ClassProtocol, fmt.Errorf("stopped after %d redirects", maxRedirects))
	}
	_, err := t.onOrigin(req)
	return err
}

// withoutCredentials removes from h, the headers of a request to another
// origin, the server's configured headers and every credential header.
func (t *httpTransport) withoutCredentials(h http.Header) {
	for k := range t.header {
		h.Del(k)
	}
	for _, k := range credentialHeaders {
		h.Del(k)
	}
}
