package front

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/mcptest"
)

// TestStatelessMultiRoundTrip: over stateless HTTP a 2026-07-28 client's
// continuation arrives in a request (and a go-sdk session) of its own; the
// requestState alone makes it the call's, and the call completes.
func TestStatelessMultiRoundTrip(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"everything": everything(t)}, nil)
	h, err := g.srv.Handler(HTTPOptions{Stateless: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	elicited := 0
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			elicited++
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace Hopper"}}, nil
		}}).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v < "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28 or later", v)
	}
	r := call(t, cs, "mcp", map[string]any{"tool": "trigger-elicitation-request", "server": "everything"})
	if r.IsError || !strings.Contains(text(r), "Grace Hopper") || elicited != 1 {
		t.Errorf("elicitation over stateless HTTP: %q (isError %v), client asked %d times; want the client's answer once", text(r), r.IsError, elicited)
	}
}

// TestUnknownSessionSaysWhy: a request naming a session this replica does
// not hold gets a 404 that says it may live on another replica or have
// ended, and what to do.
func TestUnknownSessionSaysWhy(t *testing.T) {
	g := newGateway(t, map[string]def{"f": fixture()}, nil)
	h, err := g.srv.Handler(HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", "ELSEWHERE")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "lives on another replica, or it has ended") || !strings.Contains(string(body), "Mcp-Session-Id") {
		t.Errorf("unknown session: %d %q; want 404 saying where the session may be", resp.StatusCode, body)
	}
}
