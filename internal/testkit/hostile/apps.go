package hostile

import (
	"context"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AppLabelEnv names the environment variable whose value an [NewApps]
// server puts in its UI, to tell two of them apart.
const AppLabelEnv = "SWITCHBOARD_APP_LABEL"

// AppURI is the UI resource an [NewApps] server offers: the same ui://
// path as the MCP Apps example server (server-basic-vanillajs), so that two
// servers behind one gateway share it.
const AppURI = "ui://get-time/mcp-app.html"

// NewApps returns an MCP Apps server (the io.modelcontextprotocol/ui
// extension) that offers its app tools only to a client that claims the
// extension, as the spec lets a server do: "show", whose _meta.ui names
// [AppURI] (with visibility model and app), and "refresh", an app's own
// tool (visibility app only). The UI resource is HTML holding label and
// carries a CSP and permissions in its _meta.ui. A client that does not
// claim the extension sees only "plain".
func NewApps(label string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "apps", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "plain", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("plain"), nil })
	s.AddTool(&mcp.Tool{Name: "show", InputSchema: map[string]any{"type": "object"}, Meta: mcp.Meta{
		"ui":             map[string]any{"resourceUri": AppURI, "visibility": []any{"model", "app"}},
		"ui/resourceUri": AppURI,
	}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("shown by " + label), nil
	})
	s.AddTool(&mcp.Tool{Name: "refresh", InputSchema: map[string]any{"type": "object"}, Meta: mcp.Meta{
		"ui": map[string]any{"resourceUri": AppURI, "visibility": []any{"app"}},
	}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("refreshed by " + label), nil
	})
	s.AddResource(&mcp.Resource{URI: AppURI, Name: "app", MIMEType: "text/html;profile=mcp-app"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
				URI: AppURI, MIMEType: "text/html;profile=mcp-app", Text: AppHTML(label),
				Meta: mcp.Meta{"ui": map[string]any{
					"csp":         map[string]any{"connectDomains": []any{"https://api.example.com"}},
					"permissions": map[string]any{"clipboardWrite": map[string]any{}},
					"domain":      "apps.example.com",
				}},
			}}}, nil
		})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			list, ok := res.(*mcp.ListToolsResult)
			if method != "tools/list" || !ok || claimsUI(req.GetSession()) {
				return res, err
			}
			plain := *list
			plain.Tools = nil
			for _, t := range list.Tools {
				if t.Meta["ui"] == nil {
					plain.Tools = append(plain.Tools, t)
				}
			}
			return &plain, err
		}
	})
	return s
}

// AppHTML is the UI an [NewApps] server with label serves.
func AppHTML(label string) string {
	return "<!doctype html><title>" + label + "</title><p>app of " + label + "</p>\n"
}

func claimsUI(s mcp.Session) bool {
	ss, ok := s.(*mcp.ServerSession)
	if !ok || ss.InitializeParams() == nil || ss.InitializeParams().Capabilities == nil {
		return false
	}
	_, ok = ss.InitializeParams().Capabilities.Extensions["io.modelcontextprotocol/ui"]
	return ok
}

func runApps(ctx context.Context) error {
	return NewApps(os.Getenv(AppLabelEnv)).Run(ctx, &mcp.StdioTransport{})
}
