package front

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestRootsForwarded connects a client with roots to a gateway that
// forwards them, over go-sdk's in-memory transport, and checks that a
// server that accepts them (roots: ["client"]) and that the first call
// starts has them from its start, and that when the client's roots change
// (roots/list_changed) a connected server is told and lists the new ones.
// A server that does not accept them is not even told that there are
// roots, before or after the change.
func TestRootsForwarded(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	changed := make(chan []string, 16)
	ts := mcptest.RootsServer(t, changed)
	path, args, env := testserver.Command(testserver.Roots)
	f := def{"command": path, "args": args, "env": env, "roots": []string{"client"}}
	plain := def{"command": path, "args": args, "env": env}
	g := newGatewayWith(t, map[string]def{"f": f, "plain": plain, "http": {"url": ts.URL, "roots": []string{"client"}}}, nil, Options{ForwardRoots: true})

	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	client.AddRoots(&mcp.Root{URI: "file:///a", Name: "a"})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.srv.MCP().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	// Roots are a session feature before 2026-07-28.
	cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	for _, server := range []string{"f", "http"} {
		r := call(t, cs, "mcp", map[string]any{"tool": "roots", "server": server})
		if r.IsError || text(r) != "file:///a" {
			t.Errorf("%s: roots = %q (isError %v), want file:///a", server, text(r), r.IsError)
		}
	}
	noRoots := func(when string) {
		t.Helper()
		if r := call(t, cs, "mcp", map[string]any{"tool": "roots", "server": "plain"}); text(r) != "no roots capability" {
			t.Errorf("plain %s: roots = %q, want no roots capability: it did not accept the client's", when, text(r))
		}
	}
	noRoots("at first")

	client.AddRoots(&mcp.Root{URI: "file:///b", Name: "b"})
	want := []string{"file:///a", "file:///b"}
	timeout := time.NewTimer(20 * time.Second)
	defer timeout.Stop()
	for got := []string(nil); !slices.Equal(got, want); {
		select {
		case got = <-changed:
		case <-timeout.C:
			t.Fatalf("the server was not told of the client's new roots %q", want)
		}
	}
	r := call(t, cs, "mcp", map[string]any{"tool": "roots", "server": "f"})
	if text(r) != strings.Join(want, "\n") {
		t.Errorf("f after list_changed: roots = %q, want %q", text(r), want)
	}
	noRoots("after list_changed")
}

// TestRootsNotForwarded: a gateway that forwards roots, with no server
// that accepts them, does not even list the client's.
func TestRootsNotForwarded(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	path, args, env := testserver.Command(testserver.Roots)
	g := newGatewayWith(t, map[string]def{"f": {"command": path, "args": args, "env": env}}, nil, Options{ForwardRoots: true})
	listed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	client.AddRoots(&mcp.Root{URI: "file:///"})
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "roots/list" {
				listed <- struct{}{}
			}
			return next(ctx, method, req)
		}
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.srv.MCP().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if r := call(t, cs, "mcp", map[string]any{"tool": "roots", "server": "f"}); text(r) != "no roots capability" {
		t.Errorf("f: roots = %q, want no roots capability", text(r))
	}
	select {
	case <-listed:
		t.Error("the gateway listed the client's roots, which no server accepts")
	default:
	}
}

// TestRootsBeforeFirstCall holds the client's answer to roots/list and
// checks that a call made meanwhile waits for it instead of starting a
// server with no roots. The check that the call waits is one-sided: it
// gives a call that does not wait two seconds to reach the server, and
// then lets the roots through; a gateway that waits passes however slow
// the machine is.
func TestRootsBeforeFirstCall(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	reached := make(chan struct{}, 1)
	s := mcp.NewServer(&mcp.Implementation{Name: "roots", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "roots"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		reached <- struct{}{}
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(mcptest.RootURIs(res.Roots), "\n")}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(ts.Close)
	g := newGatewayWith(t, map[string]def{"http": {"url": ts.URL, "roots": []string{"client"}}}, nil, Options{ForwardRoots: true})

	release := make(chan struct{})
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	client.AddRoots(&mcp.Root{URI: "file:///a"})
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "roots/list" {
				<-release
			}
			return next(ctx, method, req)
		}
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := g.srv.MCP().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	done := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "mcp", Arguments: map[string]any{"tool": "roots", "server": "http"}})
		if err != nil {
			done <- err.Error()
			return
		}
		done <- text(res)
	}()
	select {
	case <-reached:
		close(release)
		t.Fatalf("the call reached the server before the client's roots were known (it answered %q)", <-done)
	case <-time.After(2 * time.Second):
	}
	close(release)
	if got := <-done; got != "file:///a" {
		t.Errorf("roots = %q, want file:///a", got)
	}
}
