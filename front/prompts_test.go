package front

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestProxyOffersPrompts: in proxy mode the servers' prompts are offered to
// the client, as the catalog comes to know them (none are started for it),
// under the names direct tools get, and a prompt is got from its server.
// With toolPrefix "none" two servers' prompts of one name are both offered
// with their server's name. On main, prompts/list was empty in proxy mode.
func TestProxyOffersPrompts(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"server", []string{"fx_greet", "gx_greet"}},
		{"none", []string{"fx_greet", "gx_greet"}},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			mcptest.CheckNoLeaks(t)
			g := newGateway(t, map[string]def{"fx": fixture(), "gx": fixture()}, map[string]any{"toolPrefix": tc.prefix})
			changed := make(chan struct{}, 16)
			cs := g.connect(t, &mcp.ClientOptions{PromptListChangedHandler: func(_ context.Context, _ *mcp.PromptListChangedRequest) {
				changed <- struct{}{}
			}})
			if caps := cs.InitializeResult().Capabilities; caps.Prompts == nil || !caps.Prompts.ListChanged {
				t.Fatalf("capabilities %+v: want prompts with listChanged", caps)
			}
			if got := promptNames(t, cs); len(got) != 0 {
				t.Fatalf("prompts before the catalog knows a server (listing them must not start one): %v", got)
			}
			// A search indexes every server; the client is told of the prompts.
			if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"search": "greet"}}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for !slices.Equal(got, tc.want) {
				select {
				case <-changed:
				case <-t.Context().Done():
					t.Fatalf("prompts %v, want %v", got, tc.want)
				}
				got = promptNames(t, cs)
			}
			r, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "gx_greet", Arguments: map[string]string{"name": "ada"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Messages) != 1 || !strings.Contains(r.Messages[0].Content.(*mcp.TextContent).Text, "hello ada") {
				t.Errorf("gx_greet: %+v", r.Messages)
			}
			if _, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "greet"}); err == nil {
				t.Error("a prompt by a name not offered was got")
			}
		})
	}
}

func promptNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	r, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range r.Prompts {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}

// TestOlderRevisionGetsItsFields: go-sdk writes 2026-07-28's cache hints
// (ttlMs, cacheScope) on every listing and resource read; a client of
// 2025-11-25 is answered without them, in proxy and transparent mode, and
// a client of 2026-07-28 still gets them. On main, both got them.
func TestOlderRevisionGetsItsFields(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	for _, prefix := range []string{"server", "none"} {
		g := newGateway(t, map[string]def{"fx": fixture()}, map[string]any{"toolPrefix": prefix})
		_, url := g.connectHTTPAt(t, HTTPOptions{}, nil, "2025-11-25")
		resp, _ := lanePost(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		sid := resp.Header.Get("Mcp-Session-Id")
		lanePost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for _, req := range []string{
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":3,"method":"prompts/list"}`,
			`{"jsonrpc":"2.0","id":4,"method":"resources/list"}`,
			`{"jsonrpc":"2.0","id":5,"method":"resources/templates/list"}`,
			`{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"test://static"}}`,
		} {
			_, body := lanePost(t, url, sid, req)
			if prefix == "server" && strings.Contains(req, "resources/read") {
				continue // proxy mode has no resources of its own to read
			}
			if !strings.Contains(body, `"result"`) {
				t.Errorf("%s, %s: no result: %s", prefix, req, body)
			}
			if strings.Contains(body, "ttlMs") || strings.Contains(body, "cacheScope") {
				t.Errorf("%s, %s: a 2025-11-25 session got 2026-07-28's fields: %s", prefix, req, body)
			}
		}
		cs := g.connect(t, nil)
		r, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.CacheScope != "public" {
			t.Errorf("%s: a 2026-07-28 session's listing has cacheScope %q, want go-sdk's \"public\"", prefix, r.CacheScope)
		}
	}
}
