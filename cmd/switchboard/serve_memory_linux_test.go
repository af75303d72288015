package main

import (
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/exepages"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
)

// TestServeReleasesStartupPages checks that switchboard serve --http, once
// it says it serves, has given back the pages of the binary its start-up
// mapped (internal/exepages): without that, most of them are resident.
// Then, that after its first quiet second (pagesQuiet) it gives back those
// of start-up's tail too: fewer are resident than when it said it serves.
func TestServeReleasesStartupPages(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	home := serveHome(t, map[string]any{"f": fixtureServer(testserver.Good)}, nil)
	cmd := switchboardCmd(t, home, "serve", "--http", "127.0.0.1:0")
	startHTTP(t, cmd)
	var size int64
	resident := func() int64 {
		t.Helper()
		r, s, err := exepages.Resident(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		size = s
		return r
	}
	serving := resident()
	t.Logf("serve: %d kB of its binary's %d kB of read-only mappings resident", serving>>10, size>>10)
	if serving > size/4 {
		t.Errorf("serve has %d kB of its binary's %d kB of read-only mappings resident, want at most a quarter", serving>>10, size>>10)
	}
	// Waits on serve's quiet second, however long the machine takes to
	// give it one: the resident pages of another process have no event to
	// wait on, so they are polled.
	deadline := time.Now().Add(time.Minute)
	for r := serving; r >= serving; r = resident() {
		if time.Now().After(deadline) {
			t.Fatalf("serve still has %d kB of its binary resident a minute after it said it serves (%d kB then)", r>>10, serving>>10)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("quiet: %d kB", resident()>>10)
}
