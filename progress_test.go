package switchboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/host"
)

// stepsArgs are the arguments of the steps tool of progressServer.
type stepsArgs struct {
	Label string `json:"label"`
	Steps int    `json:"steps"`
	Wait  bool   `json:"wait"` // wait, after each step, until the step was seen (seen)
}

// progressServer is a packaged server whose tool steps reports Steps steps
// of progress, each with its Label as the message, when the call asks for
// progress, and answers whether it was asked. With Wait, it waits after
// each step until seen(label) says the caller saw it: a notification may
// otherwise reach the client after the result, and is then dropped.
func progressServer(seen func(label string) <-chan struct{}) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "jobs", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "steps", Description: "Reports progress, step by step."},
		func(ctx context.Context, req *mcp.CallToolRequest, a stepsArgs) (*mcp.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; tok != nil && i <= a.Steps; i++ {
				p := &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(a.Steps), Message: a.Label}
				if err := req.Session.NotifyProgress(ctx, p); err != nil {
					return nil, nil, err
				}
				if a.Wait {
					select {
					case <-seen(a.Label):
					case <-ctx.Done():
						return nil, nil, ctx.Err()
					}
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint("asked for progress: ", tok != nil)}}}, nil, nil
		})
	return s
}

func progressEngine(t *testing.T, srv *mcp.Server) *switchboard.Engine {
	t.Helper()
	home := t.TempDir()
	eng, err := switchboard.New(t.Context(), config.Load(config.Dirs{Home: home}), &switchboard.Options{
		SpillDir: filepath.Join(home, "spill"),
		Servers:  []host.Server{{Name: "jobs", Server: srv}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

func stepsCall(label string, steps int, wait bool) json.RawMessage {
	data, _ := json.Marshal(map[string]any{"tool": "steps", "server": "jobs", "args": stepsArgs{Label: label, Steps: steps, Wait: wait}})
	return data
}

// TestWithProgress: a call made with a context of WithProgress asks the
// server for progress, and each notification reaches the function, in
// order; a call made without asks for none.
func TestWithProgress(t *testing.T) {
	var mu sync.Mutex
	acks := map[string]chan struct{}{}
	seen := func(label string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if acks[label] == nil {
			acks[label] = make(chan struct{}, 16)
		}
		return acks[label]
	}
	eng := progressEngine(t, progressServer(func(l string) <-chan struct{} { return seen(l) }))

	var got []string
	ctx := switchboard.WithProgress(t.Context(), func(p *mcp.ProgressNotificationParams) {
		got = append(got, fmt.Sprintf("%s %v/%v", p.Message, p.Progress, p.Total))
		seen(p.Message) <- struct{}{}
	})
	r := eng.Handle(ctx, stepsCall("copy", 3, true))
	if r.IsError || r.Text != "asked for progress: true" {
		t.Fatalf("with WithProgress: %q (error %v), want the server asked for progress", r.Text, r.IsError)
	}
	if want := []string{"copy 1/3", "copy 2/3", "copy 3/3"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("progress seen: %q, want %q", got, want)
	}

	if r := eng.Handle(t.Context(), stepsCall("quiet", 3, false)); r.Text != "asked for progress: false" {
		t.Errorf("without WithProgress: %q, want no progress asked for", r.Text)
	}
}

// TestWithProgressIsPerCall attacks the routing of notifications: two
// sessions call at once, each with a function of its own; each function
// hears of its own call alone, and none is called once its call has
// returned.
func TestWithProgressIsPerCall(t *testing.T) {
	var mu sync.Mutex
	acks := map[string]chan struct{}{}
	seen := func(label string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if acks[label] == nil {
			acks[label] = make(chan struct{}, 16)
		}
		return acks[label]
	}
	eng := progressEngine(t, progressServer(func(l string) <-chan struct{} { return seen(l) }))

	var wg sync.WaitGroup
	for _, who := range []string{"alice", "bob"} {
		wg.Go(func() {
			var returned atomic.Bool
			n := 0
			ctx := switchboard.WithProgress(t.Context(), func(p *mcp.ProgressNotificationParams) {
				if p.Message != who {
					t.Errorf("%s's call heard of %q's progress", who, p.Message)
				}
				if returned.Load() {
					t.Errorf("%s's function was called after the call returned", who)
				}
				n++
				select {
				case seen(p.Message) <- struct{}{}:
				default: // a step no one waits for
				}
			})
			// Each step waits until it is seen: the two calls are in
			// flight together until both end.
			r := eng.NewSession().Handle(ctx, stepsCall(who, 5, true))
			returned.Store(true)
			if r.IsError {
				t.Errorf("%s: %s", who, r.Text)
			}
			if n != 5 {
				t.Errorf("%s heard of %d steps, want 5", who, n)
			}
			// Steps no one waits for: what comes after the result is
			// dropped, never passed on late.
			returned.Store(false)
			eng.Handle(ctx, stepsCall(who, 50, false))
			returned.Store(true)
		})
	}
	wg.Wait()
}
