package switchboard_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
)

// TestSubscribeContextEndsWithClose: a subscriber's callback runs with a
// context of the engine's, which Close cancels, and Close returns only
// once the callback has.
func TestSubscribeContextEndsWithClose(t *testing.T) {
	home := exampleHome()
	t.Cleanup(func() { os.RemoveAll(home) })
	eng, err := switchboard.New(t.Context(), config.Load(config.Dirs{Home: home}), &switchboard.Options{SpillDir: filepath.Join(t.TempDir(), "spill")})
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{})
	var returned atomic.Bool
	eng.Subscribe(func(ctx context.Context, ev switchboard.Event) {
		if ev.Kind != switchboard.ServerState || ev.Status.State != "connected" {
			return
		}
		close(entered)
		<-ctx.Done() // holds the engine's goroutine until Close
		returned.Store(true)
	})
	if r := eng.Handle(t.Context(), json.RawMessage(`{"server": "demo"}`)); r.IsError {
		t.Fatal(r.Text)
	}
	<-entered
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if !returned.Load() {
		t.Error("Close returned before the subscriber's callback did")
	}
}
