package catalog

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestWritersTakeTurns stores large entries from many goroutines at once
// with SQLite's busy timeout cut to a millisecond: this process's writers
// wait for each other in the catalog, not in SQLite, so none fails with
// SQLITE_BUSY however long another's write takes (on a busy machine, a
// 10,000-tool write outlasted the 10 s timeout).
//
// In PostgreSQL, the writers take turns the same way, and then on the
// generation row's lock.
func TestWritersTakeTurns(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		testWritersTakeTurns(t, b)
	})
}

func testWritersTakeTurns(t *testing.T, b backend) {
	var c *Catalog
	if b.name == sqliteBackend.name {
		var err error
		if c, err = open(filepath.Join(t.TempDir(), "catalog.db"), time.Millisecond); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	} else {
		c, _ = b.openTemp(t)
	}
	ctx := context.Background()

	const writers, tools = 6, 1500
	var wg sync.WaitGroup
	errs := make(chan error, 3*writers)
	for w := range writers {
		e := &Entry{Server: fmt.Sprintf("s%d", w), Hash: "h"}
		for i := range tools {
			e.Tools = append(e.Tools, &mcp.Tool{Name: fmt.Sprintf("tool_%d", i), Description: "A tool that does one thing well, for a test."})
		}
		wg.Go(func() {
			errs <- c.Put(ctx, e)
			errs <- c.PutFailure(ctx, Failure{Server: e.Server, Hash: "h", Class: "start", Error: "x", At: time.Now()})
			errs <- c.ClearFailure(ctx, e.Server, time.Now())
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	servers, err := c.Servers(ctx)
	if err != nil || len(servers) != writers {
		t.Fatalf("servers: %d, %v; want %d", len(servers), err, writers)
	}
}

// TestWriteWaitEndsWithContext: a writer waiting for its turn gives up when
// its context ends, with the context's error.
func TestWriteWaitEndsWithContext(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		c, _ := b.openTemp(t)
		unlock, err := c.lockWrites(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := c.Put(ctx, &Entry{Server: "a", Hash: "h"}); err == nil || ctx.Err() == nil {
			t.Fatalf("Put with the turn held and its context ended: %v; want the context's error", err)
		}
	})
}
