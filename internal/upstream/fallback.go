package upstream

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/origin"
	"github.com/switchboard-mcp/switchboard/internal/printable"
)

// What an HTTP server's URL answered, and the fallback to legacy SSE.
//
// A server defined by a "url" without a "type" is taken for Streamable
// HTTP (config.Server.TypeInferred). The MCP specification's backwards
// compatibility section (2025-03-26 onwards, "Transports") has a client
// that meets a server of the 2024-11-05 revision try the legacy HTTP+SSE
// transport when its POST fails with an HTTP 4xx. Switchboard falls back
// only on a definitive rejection of the POST, 404, 405, 406 or 415, as
// pi-mcp-adapter does: never on an authorization failure (401, 403), a
// timeout, a cancellation, a network error, or a server error (5xx). A
// server whose type is written is not tried another way.
//
// When a connection fails, the HTTP answers it got say what the URL is:
// an HTML page, an endpoint that is not there, a server that failed. The
// connection's error then says that, naming the URL's origin (never its
// path or query, which may hold secrets), and what to do.

// An answer is an HTTP answer of a server's URL that was not MCP: its
// status, when it was not a success, or its media type, when it was
// neither JSON nor an event stream.
type answer struct {
	method string // POST: Streamable HTTP's; GET: legacy SSE's event stream
	status int
	media  string // the Content-Type's media type, "" for none
}

// noteMCP records what resp, the answer to req, says of the URL:
// Streamable HTTP's POSTs, and legacy SSE's GET of its event stream. An
// answer that is not MCP is kept; one that is MCP forgets it. Redirects
// and authorization failures are not kept: they are followed, or said
// otherwise.
func (t *httpTransport) noteMCP(req *http.Request, resp *http.Response) {
	if (req.Method == http.MethodPost) == t.sse || isRedirect(resp.StatusCode) || isAuthStatus(resp.StatusCode) {
		return
	}
	a := &answer{method: req.Method, status: resp.StatusCode}
	a.media, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if a.mcp() {
		a = nil
	}
	t.mu.Lock()
	t.answer = a
	t.mu.Unlock()
}

// takeAnswer returns and forgets the last answer that was not MCP, or nil.
func (t *httpTransport) takeAnswer() *answer {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.answer
	t.answer = nil
	return a
}

func isRedirect(status int) bool {
	return status >= 300 && status < 400 && status != http.StatusNotModified
}

func isAuthStatus(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

// mcp reports whether the answer may be MCP's: a success that is JSON,
// an event stream, or empty (202, 204).
func (a *answer) mcp() bool {
	switch {
	case a.status < 200 || a.status >= 300:
		return false
	case a.status == http.StatusAccepted || a.status == http.StatusNoContent:
		return true
	case a.method == http.MethodGet:
		return a.media == "text/event-stream"
	}
	return a.media == "application/json" || a.media == "text/event-stream"
}

// rejectsStreamable reports whether the answer is a definitive rejection
// of Streamable HTTP's POST: the URL takes no POST, or not this one.
func (a *answer) rejectsStreamable() bool {
	if a.method != http.MethodPost {
		return false
	}
	switch a.status {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotAcceptable, http.StatusUnsupportedMediaType:
		return true
	}
	return false
}

func (a *answer) html() bool {
	return a.status >= 200 && a.status < 300 && (a.media == "text/html" || a.media == "application/xhtml+xml")
}

// failing reports whether the answer says the server failed, or is
// overloaded, rather than that the URL is wrong: try again later.
func (a *answer) failing() bool {
	return a.status >= 500 || a.status == http.StatusRequestTimeout || a.status == http.StatusTooManyRequests
}

// String says what the answer was: "HTTP 404 Not Found", "an HTML page
// (HTTP 200, text/html)".
func (a *answer) String() string {
	status := fmt.Sprintf("HTTP %d %s", a.status, http.StatusText(a.status))
	if a.status >= 200 && a.status < 300 {
		status = fmt.Sprintf("HTTP %d", a.status)
	}
	media := printable.Clip(a.media, 80)
	switch {
	case a.html():
		return fmt.Sprintf("an HTML page (%s, %s)", status, media)
	case a.status >= 200 && a.status < 300 && a.media == "":
		return status + " with no content type"
	case a.status >= 200 && a.status < 300:
		return fmt.Sprintf("%s with content type %q", status, media)
	}
	return strings.TrimSpace(status)
}

// request names the request the answer was to.
func (a *answer) request() string {
	if a.method == http.MethodPost {
		return "Streamable HTTP's POST"
	}
	return "legacy SSE's GET"
}

// A refusal is the failure of a connection to an HTTP server whose URL
// answered, but not as MCP: it says what the URL answered, and what to do.
type refusal struct {
	origin   origin.Origin
	inferred bool      // the definition has no type: legacy SSE may be tried, or was
	answers  []*answer // the POST's, then the fallback's GET; or the GET (type sse)
	err      error     // the connection's error, for an answer the status alone does not explain
}

func (r *refusal) last() *answer { return r.answers[len(r.answers)-1] }

// class says what kind of fault the refusal is: a URL that serves no MCP
// is the definition's (it needs a fix, not a retry); a failing server is
// the server's.
func (r *refusal) class() Class {
	if r.last().failing() {
		return ClassServer
	}
	return ClassConfig
}

func (r *refusal) Error() string {
	const checkURL = "check the URL (the MCP endpoint is often /mcp, or /sse for a legacy SSE server)"
	first, last := r.answers[0], r.last()
	said := "it answered " + first.String()
	if len(r.answers) > 1 {
		said = fmt.Sprintf("it answered %s to %s, and %s to %s", first, first.request(), last, last.request())
	} else if !first.html() {
		said += " to " + first.request()
	}
	switch {
	case last.failing():
		return fmt.Sprintf("the server at %s failed: %s; try again later, or see the server's logs", r.origin, said)
	case last.html() || last.status >= 200 && last.status < 300 || len(r.answers) > 1 && last.rejectsSSE():
		return fmt.Sprintf("%s does not speak MCP: %s; %s", r.origin, said, checkURL)
	case last.rejectsStreamable() && !r.inferred:
		return fmt.Sprintf("%s does not take Streamable HTTP: %s; %s; for a legacy SSE server, write \"type\": \"sse\"", r.origin, said, checkURL)
	case last.method == http.MethodGet && last.rejectsSSE():
		return fmt.Sprintf("%s does not serve a legacy SSE event stream: %s; %s; for a Streamable HTTP server, write \"type\": \"http\"", r.origin, said, checkURL)
	}
	return fmt.Sprintf("%s refused the connection: %s (%s); check the URL and the server's headers", r.origin, said, sayErr(r.err))
}

// sayErr returns what err says, unless it may name the URL, whose path
// and query may hold secrets (net/http's errors quote it whole).
func sayErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// rejectsSSE reports whether a GET's answer says there is no event
// stream here: the URL is not there, or takes no GET.
func (a *answer) rejectsSSE() bool {
	switch a.status {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotAcceptable, http.StatusGone:
		return true
	}
	return false
}

// whatAnswered returns err, the failure to connect over rt, as a refusal
// when the URL's last answer was not MCP; otherwise err. An authorization
// failure, a timeout and a cancellation say so already.
func whatAnswered(rt *httpTransport, s *config.Server, err error) error {
	a := rt.takeAnswer()
	if a == nil || classOf(err, ClassTransport) == ClassAuth || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	r := &refusal{origin: rt.origin, inferred: s.Type == config.TransportHTTP && s.TypeInferred, answers: []*answer{a}, err: err}
	return withClass(r.class(), r)
}

// fallsBack reports whether err, the failure of a Streamable HTTP
// connection, lets legacy SSE be tried: the definition has no type, and
// the URL rejected the POST outright.
func fallsBack(err error) bool {
	var r *refusal
	return errors.As(err, &r) && r.inferred && len(r.answers) == 1 && r.answers[0].rejectsStreamable()
}

// alsoOverSSE returns the error of a server that rejected Streamable HTTP
// (rejected, a refusal) and then failed over legacy SSE too (err): what
// both answered, when the event stream's GET was not MCP either; else the
// SSE failure, after the rejection.
func alsoOverSSE(rejected, err error) error {
	var first, then *refusal
	if !errors.As(rejected, &first) {
		return err
	}
	if errors.As(err, &then) {
		r := &refusal{origin: first.origin, inferred: true, answers: []*answer{first.answers[0], then.answers[0]}, err: then.err}
		return withClass(r.class(), r)
	}
	return withClass(classOf(err, ClassTransport), fmt.Errorf("%s answered %s to %s, and over legacy SSE: %w", first.origin, first.answers[0], first.answers[0].request(), err))
}

// transport returns how the server is reached: its type, or legacy SSE
// once a URL without a type has fallen back to it.
func (s *server) transport() config.Transport {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.overSSE != "" {
		return config.TransportSSE
	}
	return s.cfg.Type
}
