package switchboard

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/switchboard-mcp/switchboard/bound"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// refTable maps the opaque references a session was shown to resource
// URIs, for one connection (generation) of one server. A reference of an
// earlier connection is stale: the server may no longer have the resource.
type refTable struct {
	generation uint64
	uris       []string // ref "rN" is uris[N-1]
}

// generation returns the server's current connection number.
func (e *Engine) generation(server string) uint64 {
	for _, st := range e.pool.Snapshot() {
		if st.Name == server {
			return st.Generation
		}
	}
	return 0
}

// resources lists a server's resources and templates, naming each resource
// by a reference of this session's.
func (s *Session) resources(ctx context.Context, server string) *Result {
	res, err := s.e.pool.Resources(ctx, server)
	if err != nil {
		return s.errorResult(proxy.ActionResourcesList, server, err)
	}
	tmpls, err := s.e.pool.ResourceTemplates(ctx, server)
	if err != nil {
		return s.errorResult(proxy.ActionResourcesList, server, err)
	}
	table := &refTable{generation: s.e.generation(server)}
	r := &Result{Details: Details{Operation: string(proxy.ActionResourcesList), Server: server, Count: len(res) + len(tmpls)}}
	lines := []string{fmt.Sprintf("%s and %s on %q; read one with %s",
		plural(len(res), "resource", "resources"), plural(len(tmpls), "template", "templates"), server, s.e.opts.Audience.ReadResource(server))}
	for _, rs := range res {
		table.uris = append(table.uris, rs.URI)
		info := ResourceInfo{Ref: "r" + strconv.Itoa(len(table.uris)), Name: rs.Name, Title: rs.Title, MIMEType: rs.MIMEType,
			Description: headline(rs.Description, 120), URI: bound.RedactURI(rs.URI)}
		r.Details.Resources = append(r.Details.Resources, info)
		lines = append(lines, resourceLine(info))
	}
	for _, t := range tmpls {
		info := TemplateInfo{Name: t.Name, URITemplate: t.URITemplate, MIMEType: t.MIMEType, Description: headline(t.Description, 120)}
		r.Details.Templates = append(r.Details.Templates, info)
		lines = append(lines, fmt.Sprintf("template %s  %s%s", info.URITemplate, info.Name, dashed(info.Description)))
	}
	if len(tmpls) > 0 {
		lines = append(lines, "a URI made from a template may be read "+s.e.opts.Audience.ReadTemplate(server))
	}
	s.mu.Lock()
	s.refs[server] = table
	s.mu.Unlock()
	return s.bounded(r, "resources-"+server, lines)
}

func resourceLine(info ResourceInfo) string {
	line := info.Ref + "  " + info.Name
	if info.MIMEType != "" {
		line += " (" + info.MIMEType + ")"
	}
	return line + dashed(info.Description)
}

func dashed(s string) string {
	if s == "" {
		return ""
	}
	return " — " + s
}

// errStaleRef is matched by the error of a reference from an earlier
// connection or an unknown one.
var errStaleRef = errors.New("unknown or stale resource reference")

// uriOf turns a reference (or a URI made from a template) into a URI
// without any request to the server.
func (s *Session) uriOf(ctx context.Context, server, ref string) (string, error) {
	if n, err := strconv.Atoi(strings.TrimPrefix(ref, "r")); err == nil && strings.HasPrefix(ref, "r") {
		s.mu.Lock()
		table := s.refs[server]
		s.mu.Unlock()
		switch {
		case table == nil || n < 1 || n > len(table.uris):
			return "", fmt.Errorf("%w %q on %q (hint: list them with %s)", errStaleRef, ref, server, s.e.opts.Audience.ListResources(server))
		case table.generation != s.e.generation(server):
			return "", fmt.Errorf("%w %q: it is from an earlier connection to %q (hint: list resources again)", errStaleRef, ref, server)
		}
		return table.uris[n-1], nil
	}
	if s.e.matchesTemplate(ctx, server, ref) {
		return ref, nil
	}
	return "", fmt.Errorf("%w %q on %q: give a reference such as r1 from %s, or a URI made from one of the server's templates", errStaleRef, ref, server, s.e.opts.Audience.ResourcesListName(server))
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
func (s *Session) readResource(ctx context.Context, server, ref string) *Result {
	uri, err := s.uriOf(ctx, server, ref)
	if err != nil {
		return s.errorResult(proxy.ActionResourcesRead, server, err)
	}
	res, err := s.e.pool.ReadResource(ctx, server, uri)
	if err != nil {
		return s.errorResult(proxy.ActionResourcesRead, server, err)
	}
	r := &Result{Details: Details{Operation: string(proxy.ActionResourcesRead), Server: server, Count: len(res.Contents)}}
	var lines []string
	for i, c := range res.Contents {
		source := fmt.Sprintf("resource %s on %q", bound.RedactURI(c.URI), server)
		if c.Blob != nil {
			sp, err := s.e.spill.Blob(fmt.Sprintf("resource-%s-%d", ref, i), ".bin", c.Blob, "binary resource content")
			if err != nil {
				return s.errorResult(proxy.ActionResourcesRead, server, err)
			}
			r.Details.Spills = append(r.Details.Spills, *sp)
			lines = append(lines, fmt.Sprintf("%s: %s, %d bytes, saved to %s", source, orUnknownType(c.MIMEType), len(c.Blob), sp.Path))
			continue
		}
		lines = append(lines, bound.Untrusted(source, c.Text))
	}
	if len(lines) == 0 {
		lines = append(lines, fmt.Sprintf("resource %s on %q is empty", ref, server))
	}
	return s.bounded(r, "resource-"+ref, lines)
}

func orUnknownType(m string) string {
	if m == "" {
		return "binary"
	}
	return m
}
