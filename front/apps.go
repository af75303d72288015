package front

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/proxy"
)

// MCP Apps (the io.modelcontextprotocol/ui extension of
// @modelcontextprotocol/ext-apps): a tool names an HTML resource in
// _meta.ui.resourceUri, a ui:// URI; a host that claims the extension reads
// it and runs it in a sandboxed frame, which calls tools back through the
// host. serve passes this through:
//
//   - upstream connections claim the extension (serve relays what its
//     clients render), so servers that offer app tools only to such a
//     client offer them;
//   - a tool with a UI is registered as a direct tool (settings.appTools,
//     on by default): a host renders only the tools it lists itself, not
//     one reached through the mcp tool. A session that does not claim the
//     extension is not shown the tools registered for that reason alone;
//   - the UI resource is served under ui://SERVER/REST for the upstream's
//     ui://REST, so two servers' same path cannot collide, and the tool's
//     resourceUri is rewritten to match; every other _meta.ui field (csp,
//     permissions, domain, visibility) passes through as it came;
//   - a tool whose visibility leaves out "model" is an app's own: it is
//     kept out of every session's tools/list and stays callable, through
//     the same pipeline as every direct tool (policy, pins, audit, bounds).
const (
	uiExtension = "io.modelcontextprotocol/ui"
	appMIMEType = "text/html;profile=mcp-app"
	// legacyUIKey is the flat spelling of _meta.ui.resourceUri that the
	// ext-apps server helpers still write beside it.
	legacyUIKey = "ui/resourceUri"
)

// appResource is a UI resource serve offers: which server's, under which
// of its URIs.
type appResource struct {
	server, uri string
}

// uiCapability is the extension's settings a client claims to upstreams.
func uiCapability() map[string]any {
	return map[string]any{"mimeTypes": []string{appMIMEType}}
}

// appUI returns a tool's UI resource URI ("" for none: not a ui:// URI)
// and whether its visibility leaves the model out.
func appUI(t *mcp.Tool) (uri string, appOnly bool) {
	ui, _ := t.Meta["ui"].(map[string]any)
	uri, _ = ui["resourceUri"].(string)
	if uri == "" {
		uri, _ = t.Meta[legacyUIKey].(string)
	}
	if !strings.HasPrefix(uri, "ui://") {
		uri = ""
	}
	if v, ok := ui["visibility"].([]any); ok {
		appOnly = !slices.Contains(v, any("model"))
	}
	return uri, appOnly
}

// appURI is the URI serve offers server's UI resource uri under.
func appURI(server, uri string) string {
	return "ui://" + server + "/" + strings.TrimPrefix(uri, "ui://")
}

// withAppURI returns a copy of t whose UI resource URI (both spellings)
// is the one serve offers it under; the rest of its _meta is t's.
func withAppURI(t *mcp.Tool, server, uri string) *mcp.Tool {
	cp := *t
	cp.Meta = maps.Clone(t.Meta)
	to := appURI(server, uri)
	if ui, ok := t.Meta["ui"].(map[string]any); ok {
		ui = maps.Clone(ui)
		if _, ok := ui["resourceUri"]; ok {
			ui["resourceUri"] = to
		}
		cp.Meta["ui"] = ui
	}
	if _, ok := t.Meta[legacyUIKey]; ok {
		cp.Meta[legacyUIKey] = to
	}
	return &cp
}

// claimsUI reports whether the client of ss claimed the UI extension.
func claimsUI(ss *mcp.ServerSession) bool {
	p := initParams(ss)
	if p == nil || p.Capabilities == nil {
		return false
	}
	_, ok := p.Capabilities.Extensions[uiExtension]
	return ok
}

// syncApps makes the UI resources serve offers match want (by the URI
// offered), with no lock held.
func (s *Server) syncApps(want map[string]appResource) {
	s.mu.Lock()
	var remove, add []string
	for uri, r := range s.apps {
		if w, ok := want[uri]; !ok || w != r {
			remove = append(remove, uri)
		}
	}
	for uri, r := range want {
		if old, ok := s.apps[uri]; !ok || old != r {
			add = append(add, uri)
		}
	}
	s.apps = want
	s.mu.Unlock()
	if len(remove) > 0 {
		s.mcp.RemoveResources(remove...)
	}
	slices.Sort(add)
	for _, uri := range add {
		r := want[uri]
		s.mcp.AddResource(&mcp.Resource{URI: uri, Name: r.server + " " + r.uri, MIMEType: appMIMEType}, s.readApp(uri, r))
	}
}

// readApp returns the handler of one UI resource: it reads the resource
// from its server and answers with its contents as they came (text or
// blob, MIME type and _meta: the csp, permissions and domain the host
// applies), each under the URI serve offers it as.
func (s *Server) readApp(offered string, r appResource) mcp.ResourceHandler {
	return func(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		res, err := s.eng.ReadResource(ctx, r.server, r.uri)
		if err != nil {
			return nil, err
		}
		out := *res
		out.Contents = make([]*mcp.ResourceContents, len(res.Contents))
		for i, c := range res.Contents {
			cp := *c
			if cp.URI == r.uri {
				cp.URI = offered
			}
			out.Contents[i] = &cp
		}
		return &out, nil
	}
}

// appsFilter is receiving middleware that keeps out of tools/list the
// tools only an app calls, and, from a session that does not claim the UI
// extension, the tools registered only because they have a UI.
func (s *Server) appsFilter(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		ui := claimsUI(ss)
		s.mu.Lock()
		defer s.mu.Unlock()
		return filterTools(res, func(t *mcp.Tool) bool {
			dt, ok := s.direct[t.Name]
			return !ok || !(dt.appOnly || dt.app && !ui)
		}), nil
	}
}

// appAlias is receiving middleware for the calls an app makes: an app
// calls its own server's tools by the names that server gives them
// (get-time), while serve lists them under the names it exposes
// (basic_get-time), and serve cannot tell which app calls. A tools/call of
// a name serve does not list, which is the server's own name of exactly
// one direct tool of a server that has apps, goes to that tool, through
// the same pipeline as under its exposed name; a name several such
// servers share is refused, naming the exposed names to call instead.
func (s *Server) appAlias(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && r.Params != nil {
			exposed, err := s.appToolName(r.Params.Name)
			if err != nil {
				return nil, err
			}
			if exposed != "" {
				params := *r.Params
				params.Name = exposed
				cp := *r
				cp.Params = &params
				req = &cp
			}
		}
		return next(ctx, method, req)
	}
}

// appToolName returns the exposed name of the direct tool an app's call
// of name reaches (see appAlias), or "" when name is to be called as it is.
func (s *Server) appToolName(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, listed := s.direct[name]; listed || s.single != "" || name == s.proxyName || name == proxy.ScriptToolName || len(s.apps) == 0 {
		return "", nil
	}
	withApps := map[string]bool{}
	for _, r := range s.apps {
		withApps[r.server] = true
	}
	var matches []string
	for exposed, dt := range s.direct {
		if dt.name == name && withApps[dt.server] {
			matches = append(matches, exposed)
		}
	}
	switch len(matches) {
	case 0:
		return "", nil
	case 1:
		return matches[0], nil
	}
	slices.Sort(matches)
	return "", fmt.Errorf("tool %q is the tool of several servers' apps: call it as %s", name, strings.Join(matches, " or "))
}
