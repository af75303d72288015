package main

import (
	"testing"

	"github.com/switchboard-mcp/switchboard/internal/exepages"
	"github.com/switchboard-mcp/switchboard/internal/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
)

// TestServeReleasesStartupPages checks that switchboard serve --http, once
// it says it serves, has given back the pages of the binary its start-up
// mapped (internal/exepages): without that, most of them are resident.
func TestServeReleasesStartupPages(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := serveHome(t, map[string]any{"f": fixtureServer(testserver.Good)}, nil)
	cmd := switchboardCmd(t, home, "serve", "--http", "127.0.0.1:0")
	startHTTP(t, cmd)
	resident, size, err := exepages.Resident(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("serve: %d kB of its binary's %d kB of read-only mappings resident", resident>>10, size>>10)
	if resident > size/4 {
		t.Errorf("serve has %d kB of its binary's %d kB of read-only mappings resident, want at most a quarter", resident>>10, size>>10)
	}
}
