package front

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/gateway"
	"github.com/switchboard-mcp/switchboard/internal/jsonscan"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// Tasks for clients (MCP 2025-11-25, SEP-1686): a client may ask serve to
// run a tools/call as a task, of the mcp tool or of a direct tool. serve
// answers at once with the task it created, runs the call in the
// background by the pipeline every call takes (policy, pins, approval,
// bounds, audit: pipeline.go), and answers tasks/get, tasks/result,
// tasks/list and tasks/cancel. A task is its session's: another session
// finds no such task, even once the session that made it has ended.
//
// go-sdk v1.8.0 has no tasks (no tasks/* methods, no task field in its
// CallToolParams, no tasks capability, no execution in its Tool), so the
// door takes these requests before go-sdk reads them and answers them
// itself (taskConn over stdio), and adds the capability and each tool's
// execution.taskSupport ("optional": any tool can run either way) to
// go-sdk's answers to initialize and tools/list.
//
// A server's own tasks are the upstream side's (internal/upstream
// tasks.go): a tool that runs only as a task is called as one, whether or
// not the client asked for a task.

// Bounds on a session's tasks.
const (
	// maxLiveTasks bounds the tasks a session has running at once, and
	// maxKeptTasks those it keeps, ended ones with their results among
	// them (the oldest ended go first).
	maxLiveTasks = 64
	maxKeptTasks = 256
	// defaultTaskTTL is how long a task and its result are kept when the
	// client does not say; maxTaskTTL bounds what it may say.
	defaultTaskTTL = 5 * time.Minute
	maxTaskTTL     = time.Hour
	// taskPoll is the pollInterval suggested to clients.
	taskPoll = 500 * time.Millisecond
)

// metaRelatedTask names the task a tasks/result answer is the result of.
const metaRelatedTask = "io.modelcontextprotocol/related-task"

// Task statuses.
const (
	taskWorking   = "working"
	taskCompleted = "completed"
	taskFailed    = "failed"
	taskCancelled = "cancelled"
)

// A clientTask is one tools/call a client asked to run as a task.
type clientTask struct {
	id      string
	owner   *mcp.ServerSession
	created time.Time
	ttl     time.Duration
	cancel  context.CancelFunc
	done    chan struct{} // closed when the task has ended

	mu      sync.Mutex
	status  string
	message string
	updated time.Time
	result  *mcp.CallToolResult // set before done is closed
}

// wire is the task as the protocol writes it.
func (t *clientTask) wire() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := map[string]any{
		"taskId":        t.id,
		"status":        t.status,
		"createdAt":     t.created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt": t.updated.UTC().Format(time.RFC3339Nano),
		"ttl":           t.ttl.Milliseconds(),
		"pollInterval":  taskPoll.Milliseconds(),
	}
	if t.message != "" {
		w["statusMessage"] = t.message
	}
	return w
}

// set changes the task's status and message; it reports false, changing
// nothing, once the task has ended.
func (t *clientTask) set(status, message string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status != taskWorking {
		return false
	}
	t.status, t.message, t.updated = status, message, time.Now()
	return true
}

// taskTable is the server's tasks: by id, and each session's in the
// order they were made, so that what a request looks at is its session's
// alone.
type taskTable struct {
	mu        sync.Mutex
	byID      map[string]*clientTask
	bySession map[*mcp.ServerSession][]*clientTask
	pinged    map[string]time.Time // HTTP sessions kept alive, by id (keepAlive)
}

// ended reports whether the task has ended.
func (t *clientTask) ended() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// expireLocked forgets ss's tasks past their time to live. t.mu must be
// held.
func (t *taskTable) expireLocked(ss *mcp.ServerSession, now time.Time) {
	kept := t.bySession[ss][:0]
	for _, task := range t.bySession[ss] {
		if now.Sub(task.created) > task.ttl {
			task.cancel()
			delete(t.byID, task.id)
			continue
		}
		kept = append(kept, task)
	}
	t.setLocked(ss, kept)
}

func (t *taskTable) setLocked(ss *mcp.ServerSession, tasks []*clientTask) {
	if len(tasks) == 0 {
		delete(t.bySession, ss)
		return
	}
	t.bySession[ss] = tasks
}

// add keeps task as ss's newest, when ss has fewer than maxLiveTasks
// running; an ended task goes, the oldest first, when ss keeps
// maxKeptTasks. It returns how many ss has running when it refuses.
func (t *taskTable) add(ss *mcp.ServerSession, task *clientTask) (running int, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expireLocked(ss, task.created)
	tasks := t.bySession[ss]
	for _, other := range tasks {
		if !other.ended() {
			running++
		}
	}
	if running >= maxLiveTasks {
		return running, false
	}
	for len(tasks) >= maxKeptTasks {
		i := slices.IndexFunc(tasks, (*clientTask).ended)
		if i < 0 {
			break // cannot happen: maxLiveTasks < maxKeptTasks
		}
		delete(t.byID, tasks[i].id)
		tasks = slices.Delete(tasks, i, i+1)
	}
	if t.byID == nil {
		t.byID, t.bySession = map[string]*clientTask{}, map[*mcp.ServerSession][]*clientTask{}
	}
	t.byID[task.id] = task
	t.setLocked(ss, append(tasks, task))
	return running, true
}

// forget drops the tasks of a session that has ended: no other session
// may reach them, so they are forgotten at once rather than at the end of
// their ttl, and cancelled (their calls end with the session anyway).
func (t *taskTable) forget(ss *mcp.ServerSession) {
	t.mu.Lock()
	tasks := t.bySession[ss]
	delete(t.bySession, ss)
	for _, task := range tasks {
		delete(t.byID, task.id)
	}
	t.mu.Unlock()
	for _, task := range tasks {
		task.cancel()
	}
}

// own returns the task id names if it is ss's.
func (t *taskTable) own(ss *mcp.ServerSession, id string) *clientTask {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expireLocked(ss, time.Now())
	task := t.byID[id]
	if task == nil || task.owner != ss {
		return nil
	}
	return task
}

// list returns ss's tasks, the oldest first.
func (t *taskTable) list(ss *mcp.ServerSession) []*clientTask {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expireLocked(ss, time.Now())
	return slices.Clone(t.bySession[ss])
}

// isTaskRequest reports whether a client's request is one of the tasks'
// that go-sdk cannot serve: a tasks/* method, or a tools/call with a task.
func isTaskRequest(method string, params json.RawMessage) bool {
	switch method {
	case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
		return true
	case "tools/call":
		if !bytes.Contains(params, []byte(`"task"`)) {
			return false
		}
		task := false
		jsonscan.Members(params, func(key, _ []byte) bool {
			task = string(key) == "task"
			return !task
		})
		return task
	}
	return false
}

// taskError is a JSON-RPC error of a task request.
func taskError(code int64, format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

const (
	codeInvalidParams = -32602
	codeInternal      = -32603
)

// serveTask answers a task request of ss's (isTaskRequest). notify sends
// ss a notification (a task's status), or is nil where the door cannot.
func (s *Server) serveTask(ctx context.Context, ss *mcp.ServerSession, method string, params json.RawMessage, notify func(method string, params any)) (any, *jsonrpc.Error) {
	if ss == nil {
		return nil, taskError(codeInvalidParams, "tasks need an initialized session: send initialize first")
	}
	if method == "tools/call" {
		return s.startTask(ss, params, notify)
	}
	if method == "tasks/list" {
		return s.listTasks(ss), nil
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.TaskID == "" {
		return nil, taskError(codeInvalidParams, "%s needs a taskId: {\"taskId\": \"…\"}", method)
	}
	task := s.tasks.own(ss, p.TaskID)
	if task == nil {
		return nil, taskError(codeInvalidParams, "no task %q in this session (tasks are kept for their ttl, and only their own session sees them)", p.TaskID)
	}
	switch method {
	case "tasks/get":
		return task.wire(), nil
	case "tasks/cancel":
		if !task.set(taskCancelled, "cancelled by the client") {
			return nil, taskError(codeInvalidParams, "task %q has already ended (%s): it cannot be cancelled", task.id, task.wire()["status"])
		}
		task.cancel()
		select {
		case <-task.done: // the call has let go of everything it held
		case <-ctx.Done():
			return nil, taskError(codeInternal, "cancelling task %q: %v", task.id, ctx.Err())
		}
		if notify != nil {
			notify("notifications/tasks/status", task.wire())
		}
		return task.wire(), nil
	default: // tasks/result
		select {
		case <-task.done:
		case <-ctx.Done():
			return nil, taskError(codeInternal, "waiting for task %q: %v", task.id, ctx.Err())
		}
		task.mu.Lock()
		res, status := task.result, task.status
		task.mu.Unlock()
		if status == taskCancelled {
			return nil, taskError(codeInvalidParams, "task %q was cancelled: it has no result", task.id)
		}
		out := *res
		out.Meta = maps.Clone(res.Meta)
		if out.Meta == nil {
			out.Meta = mcp.Meta{}
		}
		out.Meta[metaRelatedTask] = map[string]any{"taskId": task.id}
		return &out, nil
	}
}

// listTasks answers tasks/list: ss's tasks, the newest last.
func (s *Server) listTasks(ss *mcp.ServerSession) map[string]any {
	mine := s.tasks.list(ss)
	list := make([]map[string]any, 0, len(mine))
	for _, t := range mine {
		list = append(list, t.wire())
	}
	return map[string]any{"tasks": list}
}

// startTask creates a task for a tools/call and runs the call in the
// background.
func (s *Server) startTask(ss *mcp.ServerSession, params json.RawMessage, notify func(string, any)) (any, *jsonrpc.Error) {
	var p struct {
		Meta      mcp.Meta        `json:"_meta"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Task      *struct {
			TTL *int64 `json:"ttl"`
		} `json:"task"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, taskError(codeInvalidParams, "reading tools/call: %v", err)
	}
	if p.Task == nil {
		return nil, taskError(codeInvalidParams, "task must be an object, e.g. {\"ttl\": 60000}")
	}
	if exposed, err := s.appToolName(p.Name); err != nil {
		return nil, taskError(codeInvalidParams, "%v", err)
	} else if exposed != "" {
		p.Name = exposed // an app's own name for its tool (appAlias)
	}
	run, ok := s.taskRunner(p.Name)
	if !ok {
		return nil, taskError(codeInvalidParams, "unknown tool %q: list the tools with tools/list", p.Name)
	}
	ttl := defaultTaskTTL
	if p.Task.TTL != nil {
		if *p.Task.TTL <= 0 {
			return nil, taskError(codeInvalidParams, "task.ttl must be a positive number of milliseconds; got %d", *p.Task.TTL)
		}
		ttl = maxTaskTTL
		if *p.Task.TTL < maxTaskTTL.Milliseconds() { // compared first: a huge ttl would overflow
			ttl = time.Duration(*p.Task.TTL) * time.Millisecond
		}
	}
	var idb [16]byte
	_, _ = rand.Read(idb[:])
	now := time.Now()
	s.mu.Lock()
	cs := s.track(ss)
	s.mu.Unlock()
	// The task outlives its request, not its session's gateway: Close
	// ends it, as it ends every call.
	ctx, cancel := context.WithTimeout(cs.ctx, ttl)
	task := &clientTask{id: hex.EncodeToString(idb[:]), owner: ss, created: now, updated: now, ttl: ttl,
		cancel: cancel, done: make(chan struct{}), status: taskWorking}
	if running, ok := s.tasks.add(ss, task); !ok {
		cancel()
		return nil, taskError(codeInvalidParams, "this session has %d tasks running, the most it may: wait for one to end or cancel one (tasks/cancel)", running)
	}
	tc := toolCall{ss: ss, name: p.Name, args: p.Arguments, meta: p.Meta, cancel: cancel}
	delete(tc.meta, "progressToken") // a task reports its status instead
	if !s.bg.Go(func() {
		defer close(task.done)
		if !s.rootsKnown(ctx, ss) { // as go-sdk's awaitRoots and the lane wait
			task.mu.Lock()
			task.result = errorResult(fmt.Errorf("the task ended before the client's roots were known: %w", context.Cause(ctx)))
			task.mu.Unlock()
			task.set(taskFailed, "the client's roots were not known in time")
			return
		}
		// The call's progress becomes the task's status message.
		ctx := gateway.WithProgress(ctx, func(pr *mcp.ProgressNotificationParams) {
			if pr.Message != "" && task.set(taskWorking, pr.Message) && notify != nil {
				notify("notifications/tasks/status", task.wire())
			}
		})
		res := run(ctx, &tc)
		status := taskCompleted
		if res.IsError {
			status = taskFailed
		}
		task.mu.Lock()
		task.result = res
		task.mu.Unlock()
		if task.set(status, "") && notify != nil {
			notify("notifications/tasks/status", task.wire())
		}
	}) {
		// Closing: the task never runs, and no one may wait for it.
		cancel()
		task.set(taskCancelled, "the gateway is shutting down")
		close(task.done)
		return nil, taskError(codeInternal, "the gateway is shutting down: no new tasks")
	}
	return map[string]any{"task": task.wire()}, nil
}

// taskRunner returns how a call of the tool name runs, through the
// pipeline its own door uses, or false when there is no such tool.
func (s *Server) taskRunner(name string) (func(context.Context, *toolCall) *mcp.CallToolResult, bool) {
	if s.proxyName != "" && name == s.proxyName {
		return s.callProxy, true
	}
	if s.script && name == proxy.ScriptToolName {
		return s.callScript, true
	}
	s.mu.Lock()
	var dt directTool
	ok := false
	if s.single != "" {
		dt, ok = directTool{server: s.single, name: name}, s.mirrored.tools[name]
	} else {
		dt, ok = s.direct[name]
	}
	s.mu.Unlock()
	if !ok {
		return nil, false
	}
	return func(ctx context.Context, tc *toolCall) *mcp.CallToolResult {
		ans, _ := s.callTool(ctx, tc, dt) // declined only on the lane
		return ans.res
	}, true
}

// taskCapability is what serve declares of tasks in its initialize answer.
var taskCapability = map[string]any{
	"list":     map[string]any{},
	"cancel":   map[string]any{},
	"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}},
}

// withTaskCapability adds the tasks capability to an initialize result.
func withTaskCapability(result json.RawMessage) (json.RawMessage, bool) {
	return editMember(result, "capabilities", func(caps map[string]json.RawMessage) bool {
		if caps == nil {
			return false
		}
		caps["tasks"], _ = json.Marshal(taskCapability)
		return true
	})
}

// withTaskExecution marks each tool of a tools/list result as one that may
// run as a task.
func withTaskExecution(result json.RawMessage) (json.RawMessage, bool) {
	return editMember(result, "tools", func(tools []map[string]json.RawMessage) bool {
		for _, t := range tools {
			t["execution"] = json.RawMessage(`{"taskSupport":"optional"}`)
		}
		return true
	})
}

// editMember returns obj, a JSON object, with its member key decoded as a
// T, changed by edit and encoded again; false, changing nothing, when obj
// or the member does not decode or edit declines.
func editMember[T any](obj json.RawMessage, key string, edit func(T) bool) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return nil, false
	}
	var v T
	if json.Unmarshal(m[key], &v) != nil || !edit(v) {
		return nil, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	m[key] = b
	out, err := json.Marshal(m)
	return out, err == nil
}

// taskConn is a stdio client's connection as go-sdk reads it, with the
// tasks' requests taken out and answered here, and the tasks capability and
// tools' execution added to go-sdk's answers (see Tasks above).
type taskConn struct {
	mcp.Connection
	s      *Server
	ctx    context.Context // ended by Close
	cancel context.CancelFunc

	// token names the connection in its initialize request's _meta, so
	// that the session go-sdk makes of it can be found (session).
	token string

	mu    sync.Mutex
	ss    *mcp.ServerSession
	init  string          // the id of the client's initialize request
	lists map[string]bool // ids of tools/list requests not yet answered
	wg    sync.WaitGroup  // task requests being answered
}

// metaConn is the key of taskConn.token in an initialize request's _meta.
const metaConn = "io.switchboard/connection"

func (c *taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			return msg, nil
		}
		switch {
		case req.Method == "initialize":
			c.mu.Lock()
			c.init = idKey(req.ID)
			c.mu.Unlock()
			req.Params = withParamsMeta(req.Params, metaConn, c.token)
			return req, nil
		case req.Method == "tools/list":
			c.mu.Lock()
			if c.lists == nil {
				c.lists = map[string]bool{}
			}
			c.lists[idKey(req.ID)] = true
			c.mu.Unlock()
			return req, nil
		case isTaskRequest(req.Method, req.Params):
			c.wg.Add(1)
			go c.answer(req)
			continue
		}
		return msg, nil
	}
}

// answer answers a task request.
func (c *taskConn) answer(req *jsonrpc.Request) {
	defer c.wg.Done()
	notify := func(method string, params any) {
		b, err := json.Marshal(params)
		if err != nil {
			return
		}
		_ = c.Connection.Write(c.ctx, &jsonrpc.Request{Method: method, Params: b})
	}
	result, rerr := c.s.serveTask(c.ctx, c.session(), req.Method, req.Params, notify)
	resp := &jsonrpc.Response{ID: req.ID}
	if rerr != nil {
		resp.Error = rerr
	} else if b, err := json.Marshal(result); err != nil {
		resp.Error = taskError(codeInternal, "encoding the answer: %v", err)
	} else {
		resp.Result = b
	}
	_ = c.Connection.Write(c.ctx, resp)
}

// session returns the go-sdk session of this connection, once initialized.
func (c *taskConn) session() *mcp.ServerSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ss != nil {
		return c.ss
	}
	for ss := range c.s.mcp.Sessions() {
		if p := ss.InitializeParams(); p != nil && p.Meta[metaConn] == c.token {
			c.ss = ss
			return ss
		}
	}
	return nil
}

func (c *taskConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error == nil && resp.Result != nil {
		key := idKey(resp.ID)
		c.mu.Lock()
		isInit, isList := key == c.init, c.lists[key]
		if isInit {
			c.init = ""
		}
		delete(c.lists, key)
		c.mu.Unlock()
		var out json.RawMessage
		ok := false
		switch {
		case isInit:
			out, ok = withTaskCapability(resp.Result)
		case isList:
			out, ok = withTaskExecution(resp.Result)
		}
		if ok {
			cp := *resp
			cp.Result = out
			msg = &cp
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *taskConn) Close() error {
	err := c.Connection.Close()
	c.cancel() // a tasks/result waiting ends
	c.wg.Wait()
	return err
}

// taskConn wraps a stdio client's connection to serve its tasks.
func (s *Server) taskConn(ctx context.Context, conn mcp.Connection) *taskConn {
	var tok [16]byte
	_, _ = rand.Read(tok[:])
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &taskConn{Connection: conn, s: s, ctx: ctx, cancel: cancel, token: hex.EncodeToString(tok[:])}
}

// withParamsMeta returns params with _meta[key] set to value, the client's own
// value of that key replaced.
func withParamsMeta(params json.RawMessage, key, value string) json.RawMessage {
	var p map[string]json.RawMessage
	if len(params) == 0 || json.Unmarshal(params, &p) != nil || p == nil {
		p = map[string]json.RawMessage{}
	}
	var meta map[string]any
	_ = json.Unmarshal(p["_meta"], &meta)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[key] = value
	b, _ := json.Marshal(meta)
	p["_meta"] = b
	out, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return out
}
