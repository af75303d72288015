package front

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// appServers are two MCP Apps servers behind one gateway that offer the
// same ui:// path, with different UIs.
func appServers() map[string]def {
	out := map[string]def{}
	for _, name := range []string{"one", "two"} {
		path, args, env := hostile.Command(hostile.Apps)
		env[hostile.AppLabelEnv] = name
		out[name] = def{"command": path, "args": args, "env": env}
	}
	return out
}

// newAppGateway is a gateway over appServers whose catalog knows them.
func newAppGateway(t *testing.T, settings map[string]any) *testGateway {
	t.Helper()
	g := newGateway(t, appServers(), settings)
	if _, err := g.srv.eng.Index(t.Context(), nil, nil); err != nil {
		t.Fatal(err)
	}
	g.srv.syncDirect(t.Context(), false)
	return g
}

var uiClient = &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{Extensions: map[string]any{uiExtension: uiCapability()}}}

func appToolList(t *testing.T, cs *mcp.ClientSession) (names []string, byName map[string]*mcp.Tool) {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName = map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		byName[tool.Name] = tool
	}
	slices.Sort(names)
	return names, byName
}

// TestApps: behind serve in proxy mode, a client that claims the MCP Apps
// extension gets the tools that have a UI as direct tools, with
// resourceUri rewritten to a per-server URI that resources/read answers
// with the server's UI byte for byte (its _meta.ui, CSP and permissions,
// unchanged); two servers' same ui:// path do not collide; an app-only
// tool is out of tools/list and callable, on go-sdk's path and the fast
// lane. The servers offer their app tools only to a client that claims
// the extension: serve claims it upstream. On main, tools/list had only
// the mcp tool and resources/list nothing.
func TestApps(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newAppGateway(t, nil)
	lane, _ := g.connectHTTP(t, HTTPOptions{}, uiClient)
	for door, cs := range map[string]*mcp.ClientSession{"go-sdk": g.connect(t, uiClient), "lane": lane} {
		t.Run(door, func(t *testing.T) {
			names, tools := appToolList(t, cs)
			if want := []string{"mcp", "one_show", "two_show"}; !slices.Equal(names, want) {
				t.Errorf("tools/list = %v, want %v (app-only tools hidden, plain tools behind mcp)", names, want)
			}
			for _, server := range []string{"one", "two"} {
				uri := "ui://" + server + "/get-time/mcp-app.html"
				if tool := tools[server+"_show"]; tool != nil {
					want := map[string]any{"resourceUri": uri, "visibility": []any{"model", "app"}}
					if diff := cmp.Diff(want, tool.Meta["ui"]); diff != "" {
						t.Errorf("%s_show _meta.ui (-want +got):\n%s", server, diff)
					}
					if got := tool.Meta["ui/resourceUri"]; got != uri {
						t.Errorf("%s_show _meta[ui/resourceUri] = %v, want %s", server, got, uri)
					}
				}
				res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				if err != nil {
					t.Fatalf("reading %s: %v", uri, err)
				}
				direct := readDirect(t, server)
				direct.URI = uri
				if diff := cmp.Diff([]*mcp.ResourceContents{direct}, res.Contents); diff != "" {
					t.Errorf("%s through serve (-directly +through serve):\n%s", uri, diff)
				}
				if r := call(t, cs, server+"_refresh", map[string]any{}); r.IsError || text(r) != "refreshed by "+server {
					t.Errorf("the app-only tool %s_refresh: %q (isError %v)", server, text(r), r.IsError)
				}
			}
			list, err := cs.ListResources(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var uris []string
			for _, r := range list.Resources {
				uris = append(uris, r.URI)
				if r.MIMEType != appMIMEType {
					t.Errorf("resource %s MIME type %q, want %q", r.URI, r.MIMEType, appMIMEType)
				}
			}
			if want := []string{"ui://one/get-time/mcp-app.html", "ui://two/get-time/mcp-app.html"}; !cmp.Equal(want, uris) {
				t.Errorf("resources/list = %v, want %v", uris, want)
			}
		})
	}
}

// readDirect reads the UI of an Apps server with label, directly.
func readDirect(t *testing.T, label string) *mcp.ResourceContents {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := hostile.NewApps(label).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, uiClient).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: hostile.AppURI})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("reading directly: %v %v", res, err)
	}
	// Decoded as a client of serve decodes it.
	b, _ := json.Marshal(res.Contents[0])
	var c mcp.ResourceContents
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

// TestAppsNotForEveryone: a client that does not claim the extension is
// not shown the tools registered for their UI (they stay behind the mcp
// tool), and settings.appTools false registers none for anyone.
func TestAppsNotForEveryone(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	t.Run("no UI client", func(t *testing.T) {
		g := newAppGateway(t, nil)
		if names, _ := appToolList(t, g.connect(t, nil)); !slices.Equal(names, []string{"mcp"}) {
			t.Errorf("tools/list = %v, want [mcp]", names)
		}
	})
	t.Run("appTools false", func(t *testing.T) {
		g := newAppGateway(t, map[string]any{"appTools": false})
		if names, _ := appToolList(t, g.connect(t, uiClient)); !slices.Equal(names, []string{"mcp"}) {
			t.Errorf("tools/list = %v, want [mcp]", names)
		}
	})
}

// TestAppCallsByOwnName: an app calls its own server's tools by the names
// that server gives them (refresh), while serve lists them as one_refresh;
// on main such a call was "unknown tool", so an app rendered through serve
// could not call back (cmd/switchboard TestBrowserRendersApp). The name
// reaches the one tool of a server with apps that has it, on go-sdk's path
// and the fast lane, and as a task; a name two app servers share is
// refused, naming what to call; a tool that is not a direct tool stays
// unknown by its own name.
func TestAppCallsByOwnName(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	servers := appServers()
	delete(servers, "two")
	g := newGateway(t, servers, nil)
	if _, err := g.srv.eng.Index(t.Context(), nil, nil); err != nil {
		t.Fatal(err)
	}
	g.srv.syncDirect(t.Context(), false)
	lane, _ := g.connectHTTP(t, HTTPOptions{}, uiClient)
	for door, cs := range map[string]*mcp.ClientSession{"go-sdk": g.connect(t, uiClient), "lane": lane} {
		t.Run(door, func(t *testing.T) {
			if r := call(t, cs, "refresh", map[string]any{}); r.IsError || text(r) != "refreshed by one" {
				t.Errorf("refresh by its own name: %q (isError %v)", text(r), r.IsError)
			}
			if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "plain", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
				t.Errorf("plain, not a direct tool, by its own name: %v; want unknown tool", err)
			}
		})
	}
	t.Run("task", func(t *testing.T) {
		p := serveStdioWith(t, g.srv.MCP(), &StdioTransport{Server: g.srv}, "2025-11-25")
		p.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"refresh","arguments":{},"task":{}}}`)
		created, _ := p.await(t, 1)
		id := rpcResult(t, created)["task"].(map[string]any)["taskId"].(string)
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":%q}}`, id))
		res, _ := p.await(t, 2)
		if b, _ := json.Marshal(rpcResult(t, res)["content"]); !strings.Contains(string(b), "refreshed by one") {
			t.Errorf("refresh as a task: %v", res)
		}
	})

	// The gateway's own tools are never another's: a direct tool of an
	// app server named as the script tool does not take its calls.
	g.srv.mu.Lock()
	g.srv.direct["one_"+proxy.ScriptToolName] = directTool{server: "one", name: proxy.ScriptToolName}
	g.srv.mu.Unlock()
	if exposed, err := g.srv.appToolName(proxy.ScriptToolName); exposed != "" || err != nil {
		t.Errorf("the script tool's name went to %q (%v); want its own", exposed, err)
	}

	two := newAppGateway(t, nil)
	cs := two.connect(t, uiClient)
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "refresh", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "one_refresh or two_refresh") {
		t.Errorf("refresh on two app servers: %v; want refused, naming one_refresh and two_refresh", err)
	}
}
