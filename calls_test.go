package switchboard_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/testserver"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// TestOnCall checks the record of each kind of call's end, made through
// the proxy tool to the fixture server: an answer, a tool's error, a
// cancellation, and a server that cannot start.
func TestOnCall(t *testing.T) {
	home := t.TempDir()
	path, args, env := testserver.Command(testserver.Good)
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"demo":   map[string]any{"command": path, "args": args, "env": env},
		"broken": map[string]any{"command": filepath.Join(home, "no-such-command")},
	}})
	d := config.Dirs{Home: home}
	os.MkdirAll(filepath.Dir(d.UserFile()), 0o700)
	if err := os.WriteFile(d.UserFile(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	log := switchboard.NewCallLog(0)
	eng, err := switchboard.New(t.Context(), config.Load(d), &switchboard.Options{SpillDir: filepath.Join(home, "spill"), OnCall: log.Add})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()

	eng.Handle(t.Context(), json.RawMessage(`{"tool":"echo","server":"demo","args":{"text":"hi"}}`))
	eng.Handle(t.Context(), json.RawMessage(`{"tool":"record","server":"demo","args":{"file":"`+filepath.Join(home, "rec")+`","then":"fail"}}`))
	ctx, cancel := context.WithCancel(t.Context())
	hang := filepath.Join(home, "hang")
	go func() {
		// Cancel once the call has reached the server, as a client that
		// gives up does. Polling the file the server writes: there is no
		// event to wait on.
		for range time.Tick(10 * time.Millisecond) {
			if data, _ := os.ReadFile(hang); len(data) > 0 {
				cancel()
				return
			}
		}
	}()
	eng.Handle(ctx, json.RawMessage(`{"tool":"record","server":"demo","args":{"file":"`+hang+`","then":"hang"}}`))
	eng.Handle(t.Context(), json.RawMessage(`{"tool":"anything","server":"broken"}`))

	type rec struct {
		Server, Tool, Outcome, ErrorClass string
		Args, Result                      bool
	}
	var got []rec
	for _, c := range log.Recent() {
		got = append(got, rec{c.Server, c.Tool, c.Outcome, c.ErrorClass, c.ArgsBytes > 0, c.ResultBytes > 0})
		if c.Start.IsZero() || c.Duration <= 0 {
			t.Errorf("%s: start %v, duration %v", c.Tool, c.Start, c.Duration)
		}
	}
	want := []rec{ // newest first
		{"demo", "record", proxy.CallCanceled, "canceled", true, false},
		{"demo", "record", proxy.CallError, "", true, true},
		{"demo", "echo", proxy.CallOK, "", true, true},
	}
	// The broken server fails before any call is made: it is not one.
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestCallLogRing(t *testing.T) {
	l := switchboard.NewCallLog(3)
	if got := l.Recent(); len(got) != 0 {
		t.Fatalf("empty log: %v", got)
	}
	for _, tool := range []string{"a", "b", "c", "d", "e"} {
		l.Add(proxy.CallRecord{Tool: tool})
	}
	var got []string
	for _, c := range l.Recent() {
		got = append(got, c.Tool)
	}
	if diff := cmp.Diff([]string{"e", "d", "c"}, got); diff != "" {
		t.Errorf("recent (-want +got):\n%s", diff)
	}
}
