package front

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// TestStatelessMultiRoundTrip: over stateless HTTP a 2026-07-28 client's
// continuation arrives in a request (and a go-sdk session) of its own; the
// requestState alone makes it the call's, and the call completes.
func TestStatelessMultiRoundTrip(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"everything": everything(t)}, nil)
	ts := g.serveHTTP(t, HTTPOptions{Stateless: true})
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
	ts := g.serveHTTP(t, HTTPOptions{})
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

// FuzzRequestBody: what the front reads of a request body before go-sdk
// does (peek, then a requestState's owner) never panics, gives the body
// back unchanged, and a requestState the front made names its replica.
func FuzzRequestBody(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp","requestState":"sb1.r0a1b2c3d4e5f.AAAAAAAAAAAAAAAAAAAAAA"}}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","method":"notifications/cancelled"},{"id":null}]`))
	f.Add([]byte(`{"params":{"requestState":"sb1..x"}}`))
	f.Add([]byte(" [ "))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("POST", "/mcp", bytes.NewReader(body))
		got, msgs, err := peek(httptest.NewRecorder(), r, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := io.ReadAll(r.Body)
		if !bytes.Equal(got, body) || !bytes.Equal(again, body) {
			t.Fatalf("peek changed the body")
		}
		for _, m := range msgs {
			m.isCall()
			if owner, ok := stateOwner(m.Params.RequestState); ok && (owner == "" || strings.Contains(owner, ".")) {
				t.Fatalf("owner %q of %q", owner, m.Params.RequestState)
			}
		}
		id := NewReplicaID()
		if owner, ok := stateOwner(newState(id)); !ok || owner != id {
			t.Fatalf("the owner of a new state of %s is %q", id, owner)
		}
	})
}
