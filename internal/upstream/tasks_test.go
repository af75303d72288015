package upstream_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/testkit/hostile"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
)

// progressLog keeps the progress notifications a pool's client receives.
type progressLog struct {
	mu    sync.Mutex
	msgs  []string
	first chan struct{}
	once  sync.Once
}

func (l *progressLog) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	l.mu.Lock()
	l.msgs = append(l.msgs, req.Params.Message)
	l.mu.Unlock()
	l.once.Do(func() { close(l.first) })
}

func (l *progressLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}

// TestTaskRequired calls the everything server's simulate-research-query,
// a tool that runs only as a task (execution.taskSupport "required"), over
// stdio and over Streamable HTTP: go-sdk's client calls it without one,
// and the server refused the call ("requires task augmentation") on every
// face. The pool runs it as a task: the call's result is the task's, and
// the task's status messages come as the call's progress (over HTTP they
// come on the session's standalone stream). Cancelling the call cancels
// the task on the server (tasks/list shows it cancelled), not only the
// wait for it.
func TestTaskRequired(t *testing.T) {
	peers := mcptest.Peers(t)
	for _, tc := range []struct {
		name   string
		server func(t *testing.T) *config.Server
	}{
		{"stdio", func(*testing.T) *config.Server { return stdioPeer("everything", peers.Everything()) }},
		{"http", func(t *testing.T) *config.Server {
			return httpPeer("everything", config.TransportHTTP, peers.ServeEverything(t, mcptest.StreamableHTTP))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &progressLog{first: make(chan struct{})}
			h := newPool(t, []*config.Server{tc.server(t)},
				&upstream.Options{Client: &mcp.ClientOptions{ProgressNotificationHandler: log.handler}})

			params := &mcp.CallToolParams{Name: "simulate-research-query", Arguments: map[string]any{"topic": "tides"}}
			params.SetProgressToken("p1")
			// OnReach: the call returns once its notifications are handled.
			res, err := h.Call(upstream.OnReach(t.Context(), func(string) {}), "everything", params)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if res.IsError || !strings.Contains(firstText(res.Content), "Research Report: tides") {
				t.Errorf("result: isError %v, %q", res.IsError, firstText(res.Content))
			}
			got := log.all()
			if len(got) < 3 || !slices.ContainsFunc(got, func(m string) bool { return strings.HasPrefix(m, "working: Analyzing content") }) {
				t.Errorf("progress = %q; want the task's statuses", got)
			}
			if tc.name == "stdio" && (!strings.HasPrefix(got[0], "working: Gathering sources") || !strings.HasPrefix(got[len(got)-1], "completed")) {
				t.Errorf("progress = %q; want each status from working: Gathering sources to completed", got)
			}

			log = &progressLog{first: make(chan struct{})}
			h = newPool(t, []*config.Server{tc.server(t)},
				&upstream.Options{Client: &mcp.ClientOptions{ProgressNotificationHandler: log.handler}})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			params = &mcp.CallToolParams{Name: "simulate-research-query", Arguments: map[string]any{"topic": "tides"}}
			params.SetProgressToken("p2")
			done := make(chan error, 1)
			go func() {
				_, err := h.Call(ctx, "everything", params)
				done <- err
			}()
			<-log.first // the task is under way
			cancel()
			if err := <-done; err == nil {
				t.Fatal("the cancelled call returned a result")
			}
			raw, err := upstream.ListTasks(t.Context(), h.Pool, "everything")
			if err != nil {
				t.Fatalf("tasks/list: %v", err)
			}
			var list struct {
				Tasks []struct {
					Status string `json:"status"`
				} `json:"tasks"`
			}
			if err := json.Unmarshal(raw, &list); err != nil {
				t.Fatal(err)
			}
			if len(list.Tasks) != 1 || list.Tasks[0].Status != "cancelled" {
				t.Errorf("tasks after the cancelled call: %s; want one, cancelled", raw)
			}
		})
	}
}

// TestTaskHostileStatuses calls the task tool of a server that floods the
// client with the status of tasks that are not the call's, before the
// task's creation is answered and while its result is awaited: only the
// call's own task reaches the caller as progress, and nothing is kept for
// the others once the call has its task.
func TestTaskHostileStatuses(t *testing.T) {
	path, args, env := hostile.Command(hostile.Tasker)
	srv := &config.Server{Name: "tasker", Type: config.TransportStdio, Command: path, Args: args, Env: env,
		RequestTimeout: 30 * time.Second, ProtocolVersion: "2025-11-25"}
	log := &progressLog{first: make(chan struct{})}
	h := newPool(t, []*config.Server{srv}, &upstream.Options{Client: &mcp.ClientOptions{ProgressNotificationHandler: log.handler}})
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}}
	params.SetProgressToken("p")
	res, err := h.Call(upstream.OnReach(t.Context(), func(string) {}), "tasker", params)
	if err != nil || firstText(res.Content) != "done" {
		t.Fatalf("Call = %v, %v; want done", res, err)
	}
	if got := log.all(); !slices.Equal(got, []string{"working: mine", "completed: mine, done"}) {
		t.Errorf("progress = %q; want the call's own task's statuses alone", got)
	}
	if n := upstream.TaskBacklog(h.Pool, "tasker"); n != 0 {
		t.Errorf("%d statuses or waiters kept after the call", n)
	}
}
