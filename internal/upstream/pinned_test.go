package upstream_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// TestPinnedRevisionHolds: a server whose protocolVersion pins a revision
// it does not speak is not used at another one (go-sdk's client falls back
// to what the server speaks): connecting fails with a configuration error
// that names both revisions and what to do. A revision it speaks is used.
func TestPinnedRevisionHolds(t *testing.T) {
	old := fixture("old", testserver.UnknownContent) // a raw server of 2025-11-25: server/discover is not found
	old.ProtocolVersion = "2026-07-28"
	fine := fixture("fine", testserver.UnknownContent)
	fine.ProtocolVersion = "2025-06-18"
	p := newPool(t, []*config.Server{old, fine}, nil)
	_, err := p.Tools(t.Context(), "old")
	var e *upstream.Error
	if !errors.As(err, &e) || e.Class != upstream.ClassConfig || !strings.Contains(err.Error(), "not 2026-07-28, which its protocolVersion pins") {
		t.Errorf("a pinned revision the server does not speak: %v; want a configuration error naming it", err)
	}
	if _, err := p.Tools(t.Context(), "fine"); err != nil {
		t.Errorf("a pinned revision the server speaks: %v", err)
	}
}
