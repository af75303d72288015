package gateway

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// A resourceRef is what a reference shown to a session stands for: a URI
// that one server listed on one of its connections (generation). Numbers
// are never reused within a session, so a reference names one resource of
// one server and one connection, or nothing.
type resourceRef struct {
	server     string
	generation uint64
	uri        string // "" once the server listed its resources on a later connection
}

// refKey finds the reference a session was already given for a URI.
type refKey struct {
	server     string
	generation uint64
	uri        string
}

// connection returns the number of the server's current or last
// connection, and whether it is open.
func (e *Engine) connection(server string) (generation uint64, open bool) {
	for _, st := range e.pool.Snapshot() {
		if st.Name == server {
			return st.Generation, st.State == upstream.StateConnected
		}
	}
	return 0, false
}

// refer returns the session's references for uris, listed by server on
// connection generation: the same URI listed again on the same connection
// keeps its reference; a new one gets the next number. References of the
// server's earlier connections stay known, to be refused with the reason.
func (s *Session) refer(server string, generation uint64, uris []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, n := range s.byURI {
		if k.server == server && k.generation != generation {
			delete(s.byURI, k)
			s.refs[n-1].uri = ""
		}
	}
	out := make([]string, len(uris))
	for i, uri := range uris {
		k := refKey{server, generation, uri}
		n, ok := s.byURI[k]
		if !ok {
			s.refs = append(s.refs, resourceRef{server: server, generation: generation, uri: uri})
			n = len(s.refs)
			s.byURI[k] = n
		}
		out[i] = "r" + strconv.Itoa(n)
	}
	return out
}

// resources lists a server's resources and templates, naming each resource
// by a reference of this session's.
func (s *Session) resources(ctx context.Context, server string) *proxy.Result {
	res, tmpls, gen, err := s.listResources(ctx, server)
	if err != nil {
		return proxy.ErrorResult(proxy.ActionResourcesList, server, err)
	}
	uris := make([]string, len(res))
	for i, rs := range res {
		uris[i] = rs.URI
	}
	return proxy.Resources(server, res, s.refer(server, gen, uris), tmpls, s.e.opts.Audience)
}

// listResources returns a server's resources and templates and the
// connection they were listed on. A list that may come from a connection
// other than the one open after it (the first listing connects; a
// reconnect may come in between) is asked for again, from the pool's cache
// of the connection now open.
func (s *Session) listResources(ctx context.Context, server string) ([]*mcp.Resource, []*mcp.ResourceTemplate, uint64, error) {
	for range 3 {
		before, open := s.e.connection(server)
		res, err := s.e.pool.Resources(ctx, server)
		if err != nil {
			return nil, nil, 0, err
		}
		tmpls, err := s.e.pool.ResourceTemplates(ctx, server)
		if err != nil {
			return nil, nil, 0, err
		}
		if after, _ := s.e.connection(server); open && after == before {
			return res, tmpls, after, nil
		}
	}
	return nil, nil, 0, fmt.Errorf("listing resources of %q: it reconnected three times meanwhile; try again", server)
}

// errStaleRef is matched by the error of a reference that is unknown, of
// another server, or of a connection that is over.
var errStaleRef = errors.New("unknown or stale resource reference")

// uriOf turns a reference (or a URI made from a template) into a URI
// without any request to the server.
func (s *Session) uriOf(ctx context.Context, server, ref string) (string, error) {
	if n, ok := refNumber(ref); ok {
		return s.lookup(server, ref, n)
	}
	if s.e.matchesTemplate(ctx, server, ref) {
		return ref, nil
	}
	return "", fmt.Errorf("%w %q on %q: give a reference such as r1 from %s, or a URI made from one of the server's templates", errStaleRef, ref, server, s.e.opts.Audience.ResourcesListName(server))
}

// refNumber returns N of a reference "rN".
func refNumber(ref string) (int, bool) {
	digits, ok := strings.CutPrefix(ref, "r")
	n, err := strconv.Atoi(digits)
	return n, ok && err == nil && strconv.Itoa(n) == digits
}

// lookup returns the URI that reference number n names, if it is one of
// server's and its connection is still the open one; otherwise it says why
// not and to list again.
func (s *Session) lookup(server, ref string, n int) (string, error) {
	again := "hint: list them again with " + s.e.opts.Audience.ListResources(server) + " and use a reference from that list"
	s.mu.Lock()
	var r resourceRef
	known := n >= 1 && n <= len(s.refs)
	if known {
		r = s.refs[n-1]
	}
	s.mu.Unlock()
	gen, open := s.e.connection(server)
	switch {
	case !known:
		return "", fmt.Errorf("%w %q on %q: this session was given no such reference (%s)", errStaleRef, ref, server, again)
	case r.server != server:
		return "", fmt.Errorf("%w %q: it names a resource of %q, not of %q; references belong to one server (%s)", errStaleRef, ref, r.server, server, again)
	case r.generation != gen:
		return "", fmt.Errorf("%w %q: it is from an earlier connection to %q, which has reconnected since; the resource it named may be gone (%s)", errStaleRef, ref, server, again)
	case !open:
		return "", fmt.Errorf("%w %q: the connection to %q it was listed on has closed since; the resource it named may be gone (%s)", errStaleRef, ref, server, again)
	}
	return r.uri, nil
}

// matchesTemplate reports whether uri starts with the literal prefix of one
// of the server's resource templates.
func (e *Engine) matchesTemplate(ctx context.Context, server, uri string) bool {
	s, _ := e.cfg.Server(server)
	ent, ok := e.cached(ctx, s)
	if !ok {
		return false
	}
	for _, t := range ent.ResourceTemplates {
		prefix, _, _ := strings.Cut(t.URITemplate, "{")
		if prefix != "" && strings.HasPrefix(uri, prefix) {
			return true
		}
	}
	return false
}

// readResource reads one resource; its text is labelled as untrusted data.
func (s *Session) readResource(ctx context.Context, server, ref string) *proxy.Result {
	uri, err := s.uriOf(ctx, server, ref)
	if err != nil {
		return proxy.ErrorResult(proxy.ActionResourcesRead, server, err)
	}
	res, err := s.e.pool.ReadResource(ctx, server, uri)
	if err != nil {
		return proxy.ErrorResult(proxy.ActionResourcesRead, server, err)
	}
	parts := make([]proxy.ResourcePart, len(res.Contents))
	for i, c := range res.Contents {
		parts[i] = proxy.ResourcePart{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}
		if c.Blob != nil {
			sp, err := s.e.spill.Blob(fmt.Sprintf("resource-%s-%d", ref, i), ".bin", c.Blob, "binary resource content")
			if err != nil {
				return proxy.ErrorResult(proxy.ActionResourcesRead, server, err)
			}
			parts[i].Blob, parts[i].Size = sp, len(c.Blob)
		}
	}
	return proxy.Read(server, ref, parts)
}
