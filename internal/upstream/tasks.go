package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tasks (MCP 2025-11-25, SEP-1686): a server that declares
// capabilities.tasks.requests.tools.call may run a tool call as a task. It
// answers a tools/call that carries a task field with the task it created,
// reports the task's status with notifications/tasks/status, and gives the
// call's result to tasks/result once the task has ended. A tool whose
// execution.taskSupport is "required" can be called no other way.
//
// go-sdk v1.8.0 knows none of this: its Tool drops execution, its
// CallToolParams drop task, and it has no tasks/* methods. On a stdio
// connection the task's requests go beside go-sdk's, on the fast path
// (callRaw), and a call of a tool that requires a task runs the task to its
// end and answers with its result (Pool.Call): every face (the mcp tool,
// direct tools, the CLI, the library, scripts) sees an ordinary call that
// takes a while, with its policy, pins, audit and bounds, and the task's
// status messages as progress notifications of the call's own progress
// token. Cancelling the call cancels the task.

// A rawCaller sends a request beside go-sdk's on a connection and returns
// its response: stdioConn over stdio, httpRaw over Streamable HTTP.
type rawCaller interface {
	callRaw(ctx context.Context, method string, params []byte, cancelled func()) (*jsonrpc.Response, error)
}

// taskCancelWait bounds how long a cancelled call waits for the server to
// take tasks/cancel.
const taskCancelWait = 2 * time.Second

// tasks is what a stdio connection knows of its server's tasks.
type tasks struct {
	initSeen atomic.Bool // the initialize answer has been read
	calls    atomic.Bool // the server runs tools/call as tasks
	n        atomic.Int64

	mu       sync.Mutex
	listed   bool              // support holds a whole tools/list
	support  map[string]string // tool → execution.taskSupport
	creating int               // task calls not yet answered with their task
	waiting  map[string]*taskWaiter
	early    []earlyStatus // the latest statuses of tasks not yet waited for, oldest first
}

// earlyStatus is the status of a task no call waits for yet: the server
// may send it before the answer that creates the task.
type earlyStatus struct{ id, msg string }

// maxEarly bounds the statuses kept for tasks no call waits for yet; the
// oldest go first, so that a server that floods the client with the
// status of other tasks loses no status that came just before its answer.
const maxEarly = 64

// taskWaiter is a call waiting for its task's result.
type taskWaiter struct {
	token any // the call's progress token; nil: none
	n     int // status notifications passed on
}

// noteInit reads the server's capabilities from its initialize answer:
// go-sdk's ServerCapabilities drops tasks.
func (t *tasks) noteInit(line []byte) {
	if !bytes.Contains(line, []byte(`"serverInfo"`)) {
		return
	}
	var m struct {
		Result *struct {
			Capabilities struct {
				Tasks *struct {
					Requests struct {
						Tools struct {
							Call json.RawMessage `json:"call"`
						} `json:"tools"`
					} `json:"requests"`
				} `json:"tasks"`
			} `json:"capabilities"`
			ServerInfo json.RawMessage `json:"serverInfo"`
		} `json:"result"`
	}
	if json.Unmarshal(line, &m) != nil || m.Result == nil || m.Result.ServerInfo == nil {
		return
	}
	t.initSeen.Store(true)
	if tk := m.Result.Capabilities.Tasks; tk != nil && isObject(tk.Requests.Tools.Call) {
		t.calls.Store(true)
	}
}

func isObject(v json.RawMessage) bool { return len(v) > 0 && v[0] == '{' }

// noteTools keeps the execution.taskSupport of the tools in a tools/list
// answer, as go-sdk reads it too (go-sdk's Tool drops it).
func (t *tasks) noteTools(result []byte) {
	var page struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.support == nil {
		t.support = map[string]string{}
	}
	for _, tool := range page.Tools {
		switch {
		case tool.Execution == nil || tool.Execution.TaskSupport == "":
			delete(t.support, tool.Name) // no longer a task tool, if it was
		case len(t.support) < maxTaskTools || t.support[tool.Name] != "":
			t.support[tool.Name] = tool.Execution.TaskSupport
		}
	}
}

// maxTaskTools bounds the tools whose task support a connection keeps: a
// server could list names without end.
const maxTaskTools = 10000

// observe takes what a task needs from a message the server wrote, on
// the goroutine that reads it: its capabilities, the tools' task support,
// and the status of a task a call waits for. It reports whether msg is
// such a status, which go-sdk has no use for, and returns the progress
// notification to pass the call's caller in its place (nil for none).
func (t *tasks) observe(msg []byte) (taken bool, note jsonrpc.Message) {
	if !t.initSeen.Load() {
		t.noteInit(msg)
		return false, nil
	}
	if !t.calls.Load() {
		return false, nil
	}
	if bytes.Contains(msg, []byte(`"taskSupport"`)) {
		var m struct {
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(msg, &m) == nil && isObject(m.Result) {
			t.noteTools(m.Result)
		}
		return false, nil
	}
	if t.n.Load() == 0 || !bytes.Contains(msg, []byte(`"notifications/tasks/status"`)) {
		return false, nil
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			TaskID        string `json:"taskId"`
			Status        string `json:"status"`
			StatusMessage string `json:"statusMessage"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "notifications/tasks/status" {
		return false, nil
	}
	status := m.Params.Status
	if m.Params.StatusMessage != "" {
		status += ": " + m.Params.StatusMessage
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.waiting[m.Params.TaskID]
	if w == nil {
		if t.creating > 0 {
			if len(t.early) == maxEarly {
				t.early = append(t.early[:0], t.early[1:]...)
			}
			t.early = append(t.early, earlyStatus{m.Params.TaskID, status})
		}
		return true, nil // a task no call here waits for (yet)
	}
	return true, w.progress(status)
}

// claimTask takes a line of a task's status (tasks.observe), passing its
// progress to go-sdk in its place.
func (c *stdioConn) claimTask(line []byte) bool {
	taken, note := c.tasks.observe(line)
	c.pass(note)
	return taken
}

// progress returns the progress notification that passes status on to
// the waiting call's caller: nil for a call without a progress token.
// Called with tasks.mu held.
func (w *taskWaiter) progress(status string) jsonrpc.Message {
	if w.token == nil {
		return nil
	}
	w.n++
	note, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"method":  "notifications/progress",
		"params":  map[string]any{"progressToken": w.token, "progress": w.n, "message": status},
	})
	if err != nil {
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(note)
	if err != nil {
		return nil
	}
	return msg
}

// pass hands msg, if any, to go-sdk as if the server had sent it, before
// the answer of the call it is about: a call made with OnReach returns once
// it has been handled (see settle).
func (c *stdioConn) pass(msg jsonrpc.Message) {
	if msg == nil {
		return
	}
	select {
	case c.incoming <- incoming{msgs: []jsonrpc.Message{msg}}:
	case <-c.closed:
	}
	// Noted once queued: off the reading goroutine (a status that came
	// before its task's answer), the next answer's mark then follows it.
	c.settle.read(msg)
}

// requiresTask reports whether the server runs tool only as a task. It
// lists the server's tools once, on the fast path, when go-sdk's listing
// has not been seen yet (a call from a cold CLI lists nothing).
func (t *tasks) requiresTask(ctx context.Context, rc rawCaller, tool string) (bool, error) {
	if !t.calls.Load() {
		return false, nil
	}
	t.mu.Lock()
	support, known := t.support[tool]
	listed := t.listed
	t.mu.Unlock()
	if known || listed {
		return support == "required", nil
	}
	cursor := ""
	for range 100 { // pages: a bound on a server that never stops paging
		params := []byte(`{}`)
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		resp, err := rc.callRaw(ctx, "tools/list", params, nil)
		if err != nil {
			return false, err
		}
		if resp.Error != nil {
			return false, resp.Error
		}
		t.noteTools(resp.Result)
		var page struct {
			NextCursor string `json:"nextCursor"`
		}
		if json.Unmarshal(resp.Result, &page) != nil || page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	t.mu.Lock()
	t.listed = true
	support = t.support[tool]
	t.mu.Unlock()
	return support == "required", nil
}

// taskCall is the params of a tools/call that asks for a task.
type taskCall struct {
	Meta      mcp.Meta `json:"_meta,omitempty"`
	Name      string   `json:"name"`
	Arguments any      `json:"arguments"`
	Task      struct{} `json:"task"` // the server's own time to live
}

// callTask calls a tool as a task and waits for its result: tools/call
// with a task field, then tasks/result, which the server answers when the
// task has ended. The task's status notifications come as progress of the
// call's progress token, if it has one. When ctx ends first, the task is
// cancelled (tasks/cancel) as well as the request.
func (t *tasks) callTask(ctx context.Context, rc rawCaller, params *mcp.CallToolParams, cancelled func(), pass func(jsonrpc.Message)) (json.RawMessage, error) {
	body, err := json.Marshal(taskCall{Meta: params.Meta, Name: params.Name, Arguments: params.Arguments})
	if err != nil {
		return nil, fmt.Errorf("encoding the call of %q: %w", params.Name, err)
	}
	t.mu.Lock()
	t.creating++
	t.n.Add(1) // the reader looks for statuses
	t.mu.Unlock()
	created := func(id string) {
		t.mu.Lock()
		var note jsonrpc.Message
		if id != "" {
			if t.waiting == nil {
				t.waiting = map[string]*taskWaiter{}
			}
			w := &taskWaiter{token: params.GetProgressToken()}
			t.waiting[id] = w
			// Its last status, if it came before the answer.
			for i := len(t.early) - 1; i >= 0; i-- {
				if t.early[i].id == id {
					note = w.progress(t.early[i].msg)
					t.early = slices.Delete(t.early, i, i+1)
					break
				}
			}
		}
		if t.creating--; t.creating == 0 {
			t.early = nil
		}
		t.n.Store(int64(len(t.waiting) + t.creating))
		t.mu.Unlock()
		pass(note)
	}
	resp, err := rc.callRaw(ctx, "tools/call", body, cancelled)
	if err != nil {
		created("")
		return nil, err
	}
	if resp.Error != nil {
		created("")
		return nil, resp.Error
	}
	var answer struct {
		Task *struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if err := json.Unmarshal(resp.Result, &answer); err != nil || answer.Task == nil {
		created("")
		return resp.Result, nil // the server answered at once, without a task
	}
	id := answer.Task.TaskID
	if id == "" {
		created("")
		return nil, fmt.Errorf("the server created a task without an id for %q", params.Name)
	}
	created(id)
	defer func() {
		t.mu.Lock()
		delete(t.waiting, id)
		t.n.Store(int64(len(t.waiting) + t.creating))
		t.mu.Unlock()
	}()
	idParams, _ := json.Marshal(map[string]string{"taskId": id})
	resp, err = rc.callRaw(ctx, "tasks/result", idParams, cancelled)
	if err != nil {
		if ctx.Err() != nil {
			// The caller gave up on the call: the server is told to stop
			// the task, not only to stop waiting for it.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskCancelWait)
			_, _ = rc.callRaw(cctx, "tasks/cancel", idParams, nil)
			cancel()
		}
		return nil, err
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("task %s: %w", strconv.Quote(id), resp.Error)
	}
	return resp.Result, nil
}
