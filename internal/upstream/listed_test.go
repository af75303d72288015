package upstream_test

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestListedTools: ListedTools gives the tools the current connection
// listed, the very list Tools returns, and nothing before the server is
// connected and listed, nor once it reconnected and has not listed them
// on the new connection.
func TestListedTools(t *testing.T) {
	h := newPool(t, []*config.Server{fixture("f", testserver.Good)}, nil)
	if _, ok := h.ListedTools("f"); ok {
		t.Fatal("tools listed before the server was connected")
	}
	tools, err := h.Tools(t.Context(), "f")
	if err != nil {
		t.Fatal(err)
	}
	listed, ok := h.ListedTools("f")
	if !ok || len(listed) == 0 || &listed[0] != &tools[0] {
		t.Fatalf("ListedTools = %d tools (%v), want the list Tools returned", len(listed), ok)
	}
	if err := h.Reconnect(t.Context(), "f"); err != nil {
		t.Fatal(err)
	}
	if l, ok := h.ListedTools("f"); ok && len(l) > 0 && &l[0] == &tools[0] {
		t.Error("after a reconnection, ListedTools gives the old connection's list")
	}
	if _, ok := h.ListedTools("nobody"); ok {
		t.Error("tools listed for an unknown server")
	}
}
