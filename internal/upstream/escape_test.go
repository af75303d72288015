//go:build linux

package upstream_test

import (
	"os"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestSupervisorEndsWhatLeftTheGroup has the server start a grandchild in
// a process group of its own, then closes the pool: the server exits when
// its input ends, and its supervisor, the subreaper that adopted the
// grandchild, must end it though killing the group does not reach it.
func TestSupervisorEndsWhatLeftTheGroup(t *testing.T) {
	h := newPool(t, []*config.Server{fixture("f", testserver.Away)}, nil) // supervised
	out, err := h.call(t.Context(), "f", "spawn-away", nil)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := strconv.Atoi(out)
	if err != nil {
		t.Fatalf("spawn answered %q", out)
	}
	if !mcptest.Alive(grandchild) {
		t.Fatalf("grandchild %d not running", grandchild)
	}
	h.Close()
	mcptest.WaitGone(t, "the grandchild that left the server's group", grandchild)
}

// TestCloseEndsWhatLeftTheGroup is TestSupervisorEndsWhatLeftTheGroup
// without a supervisor, as a one-shot command runs its servers: Close
// finds the grandchild in its own session by the pool's mark in its
// environment, and ends it.
func TestCloseEndsWhatLeftTheGroup(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	p := upstream.New([]*config.Server{fixture("f", testserver.Away)}, &upstream.Options{
		BaseEnv:  append(upstream.BaseEnv(os.Environ()), mcptest.OwnerEnv+"="+os.Getenv(mcptest.OwnerEnv)),
		GroupDir: t.TempDir(),
	})
	defer p.Close()
	res, err := p.Call(t.Context(), "f", &mcp.CallToolParams{Name: "spawn-away"})
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := strconv.Atoi(res.Content[0].(*mcp.TextContent).Text)
	if err != nil || !mcptest.Alive(grandchild) {
		t.Fatalf("spawn-away answered %v: want a running grandchild's pid", res.Content)
	}
	p.Close()
	if mcptest.Alive(grandchild) {
		t.Errorf("the grandchild %d that left the server's group outlived Close", grandchild)
	}
}
