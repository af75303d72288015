//go:build linux

package upstream_test

import (
	"strconv"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
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
