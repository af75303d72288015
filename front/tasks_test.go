package front

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/testkit/idptest"
	"github.com/switchboard-mcp/switchboard/internal/testkit/mcptest"
)

// await reads p's messages until the answer to request id, and returns it
// with the notifications read on the way.
func (p *stdioPeer) await(t *testing.T, id float64) (answer map[string]any, notes []map[string]any) {
	t.Helper()
	for {
		m := p.recv(t)
		if m["id"] == id {
			return m, notes
		}
		notes = append(notes, m)
	}
}

// task sends a request of a tasks/* method about taskID and returns its
// answer.
func (p *stdioPeer) task(t *testing.T, id float64, method, taskID string) map[string]any {
	t.Helper()
	p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"method":%q,"params":{"taskId":%q}}`, id, method, taskID))
	answer, _ := p.await(t, id)
	return answer
}

// rpcResult returns an answer's result, failing the test on an error.
func rpcResult(t *testing.T, answer map[string]any) map[string]any {
	t.Helper()
	r, ok := answer["result"].(map[string]any)
	if !ok {
		t.Fatalf("answer without a result: %v", answer)
	}
	return r
}

// rpcErr returns an answer's error message, failing the test on a result.
func rpcErr(t *testing.T, answer map[string]any) string {
	t.Helper()
	e, ok := answer["error"].(map[string]any)
	if !ok {
		t.Fatalf("answer without an error: %v", answer)
	}
	return fmt.Sprint(e["message"])
}

// researchCall is a tools/call of the everything server's task tool, as a
// task: through the mcp tool, or directly.
func researchCall(id int, direct bool, topic string) string {
	if direct {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"everything_simulate-research-query","arguments":{"topic":%q},"task":{"ttl":60000}}}`, id, topic)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"everything_simulate-research-query","args":{"topic":%q}},"task":{}}}`, id, topic)
}

// TestClientTasksStdio runs tools/call as tasks through serve over stdio,
// with the everything server behind it, of the mcp tool and of a direct
// tool. go-sdk has no tasks: before, serve declared none, and answered
// tasks/get with "method not found". Now the tasks capability and the
// tools' execution are declared; a task's call answers at once with the
// task, its status comes as notifications, tasks/result gives the call's
// result; a cancelled task ends without a result. A second session sees
// none of the first one's tasks, by id or in its list, and cannot cancel
// them.
func TestClientTasksStdio(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	ev := everything(t)
	ev["directTools"] = []string{"simulate-research-query"}
	g := newGateway(t, map[string]def{"everything": ev}, nil)
	a := serveStdioWith(t, g.srv.MCP(), &StdioTransport{Server: g.srv}, "2025-11-25")
	b := serveStdioWith(t, g.srv.MCP(), &StdioTransport{Server: g.srv}, "2025-11-25")

	caps := rpcResult(t, a.init)["capabilities"].(map[string]any)
	if tasks, _ := json.Marshal(caps["tasks"]); string(tasks) != `{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}}` {
		t.Errorf("capabilities.tasks = %s", tasks)
	}
	a.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	list, _ := a.await(t, 1)
	for _, tool := range rpcResult(t, list)["tools"].([]any) {
		tool := tool.(map[string]any)
		if ex, _ := json.Marshal(tool["execution"]); string(ex) != `{"taskSupport":"optional"}` {
			t.Errorf("tool %v: execution %s", tool["name"], ex)
		}
	}

	for i, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			id := float64(10 + 10*i)
			a.send(t, researchCall(int(id), direct, "tides"))
			created, _ := a.await(t, id)
			task := rpcResult(t, created)["task"].(map[string]any)
			taskID := task["taskId"].(string)
			if task["status"] != "working" || task["ttl"] == nil || task["createdAt"] == nil {
				t.Errorf("created task = %v", task)
			}
			if msg := b.task(t, 1, "tasks/get", taskID); !strings.Contains(rpcErr(t, msg), "no task") {
				t.Errorf("another session's tasks/get: %v", msg)
			}
			if msg := b.task(t, 2, "tasks/cancel", taskID); !strings.Contains(rpcErr(t, msg), "no task") {
				t.Errorf("another session's tasks/cancel: %v", msg)
			}
			b.send(t, `{"jsonrpc":"2.0","id":3,"method":"tasks/list"}`)
			if msg, _ := b.await(t, 3); len(rpcResult(t, msg)["tasks"].([]any)) != 0 {
				t.Errorf("another session's tasks/list: %v", msg)
			}
			a.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"method":"tasks/result","params":{"taskId":%q}}`, id+1, taskID))
			res, notes := a.await(t, id+1)
			r := rpcResult(t, res)
			if text, _ := json.Marshal(r["content"]); !strings.Contains(string(text), "Research Report: tides") || r["isError"] == true {
				t.Errorf("tasks/result = %v", r)
			}
			if rel, _ := json.Marshal(r["_meta"]); !strings.Contains(string(rel), taskID) {
				t.Errorf("tasks/result _meta = %s, want the related task", rel)
			}
			var statuses []string
			for _, n := range notes {
				if n["method"] == "notifications/tasks/status" {
					p := n["params"].(map[string]any)
					statuses = append(statuses, fmt.Sprint(p["status"], " ", p["statusMessage"]))
				}
			}
			if len(statuses) < 2 || !strings.Contains(statuses[0], "Gathering sources") || !strings.HasPrefix(statuses[len(statuses)-1], "completed") {
				t.Errorf("status notifications = %q", statuses)
			}
			a.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"method":"tasks/get","params":{"taskId":%q}}`, id+2, taskID))
			if msg, _ := a.await(t, id+2); rpcResult(t, msg)["status"] != "completed" {
				t.Errorf("tasks/get after the result = %v", msg)
			}
		})
	}

	t.Run("cancel", func(t *testing.T) {
		a.send(t, researchCall(40, true, "moons"))
		created, _ := a.await(t, 40)
		taskID := rpcResult(t, created)["task"].(map[string]any)["taskId"].(string)
		if msg := a.task(t, 41, "tasks/cancel", taskID); rpcResult(t, msg)["status"] != "cancelled" {
			t.Errorf("tasks/cancel = %v", msg)
		}
		if msg := a.task(t, 42, "tasks/result", taskID); !strings.Contains(rpcErr(t, msg), "cancelled") {
			t.Errorf("tasks/result of a cancelled task = %v", msg)
		}
		if msg := a.task(t, 43, "tasks/cancel", taskID); !strings.Contains(rpcErr(t, msg), "already ended") {
			t.Errorf("tasks/cancel of an ended task = %v", msg)
		}
	})

	t.Run("bad requests", func(t *testing.T) {
		for i, tc := range []struct{ line, want string }{
			{`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nosuch","arguments":{},"task":{}}}`, "unknown tool"},
			{`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mcp","arguments":{},"task":{"ttl":-5}}}`, "positive"},
			{`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mcp","arguments":{},"task":7}}`, "reading tools/call"},
			{`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{}}`, "needs a taskId"},
		} {
			id := 50 + i
			a.send(t, fmt.Sprintf(tc.line, id))
			if msg, _ := a.await(t, float64(id)); !strings.Contains(rpcErr(t, msg), tc.want) {
				t.Errorf("%s: %v, want an error saying %q", tc.line, msg, tc.want)
			}
		}
	})
}

// httpPeer is a client session of serve over Streamable HTTP, spoken raw.
type httpPeer struct {
	url, session string
	token        string // a bearer token, if set
}

func (p *httpPeer) post(t *testing.T, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, p.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if p.session != "" {
		req.Header.Set("Mcp-Session-Id", p.session)
	}
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		p.session = id
	}
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusAccepted {
		return nil
	}
	if resp.StatusCode != http.StatusOK {
		m := map[string]any{}
		if json.Unmarshal(raw, &m) != nil {
			m["body"] = string(raw)
		}
		m["status"] = resp.StatusCode
		return m
	}
	// An event stream's answer is its last data line.
	if i := bytes.LastIndex(raw, []byte("data: ")); i >= 0 {
		raw = raw[i+len("data: "):]
	}
	var m map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(raw), &m); err != nil {
		t.Fatalf("%s: answer %q (%s): %v", body, raw, resp.Status, err)
	}
	return m
}

func (p *httpPeer) initialize(t *testing.T) map[string]any {
	t.Helper()
	m := p.post(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	p.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m
}

// TestClientTasksHTTP is TestClientTasksStdio's over Streamable HTTP, the
// fast lane on (status comes by tasks/get there: no notifications), and
// without sessions, where tasks are refused with the reason.
func TestClientTasksHTTP(t *testing.T) {
	mcptest.CheckNoLeaks(t)
	g := newGateway(t, map[string]def{"everything": everything(t)}, nil)
	ts := g.serveHTTP(t, HTTPOptions{})
	a, b := &httpPeer{url: ts.URL + "/mcp"}, &httpPeer{url: ts.URL + "/mcp"}
	init := a.initialize(t)
	b.initialize(t)
	if tasks, _ := json.Marshal(rpcResult(t, init)["capabilities"].(map[string]any)["tasks"]); !strings.Contains(string(tasks), `"requests":{"tools":{"call":{}}}`) {
		t.Errorf("capabilities.tasks = %s", tasks)
	}
	list := a.post(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if ex, _ := json.Marshal(rpcResult(t, list)["tools"].([]any)[0].(map[string]any)["execution"]); string(ex) != `{"taskSupport":"optional"}` {
		t.Errorf("execution = %s", ex)
	}
	created := a.post(t, researchCall(2, false, "tides"))
	taskID := rpcResult(t, created)["task"].(map[string]any)["taskId"].(string)
	if msg := b.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":%q}}`, taskID)); !strings.Contains(rpcErr(t, msg), "no task") {
		t.Errorf("another session's tasks/get: %v", msg)
	}
	stranger := &httpPeer{url: a.url}
	if msg := stranger.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":%q}}`, taskID)); !strings.Contains(rpcErr(t, msg), "no such session") {
		t.Errorf("tasks/get without a session: %v", msg)
	}
	res := a.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":%q}}`, taskID))
	if text, _ := json.Marshal(rpcResult(t, res)["content"]); !strings.Contains(string(text), "Research Report: tides") {
		t.Errorf("tasks/result = %v", res)
	}
	if msg := a.post(t, `{"jsonrpc":"2.0","id":5,"method":"tasks/list"}`); len(rpcResult(t, msg)["tasks"].([]any)) != 1 {
		t.Errorf("tasks/list = %v", msg)
	}

	// A task request keeps its session alive in go-sdk's eyes: go-sdk
	// ends a session idle for 30 minutes, counting only what it handles,
	// and a client polling a long task sends go-sdk nothing else.
	l := g.srv.lane.Load()
	l.mu.Lock()
	ls := l.sessions[a.session]
	ls.seen = time.Time{}
	l.mu.Unlock()
	g.srv.tasks.mu.Lock()
	delete(g.srv.tasks.pinged, a.session)
	g.srv.tasks.mu.Unlock()
	a.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"tasks/get","params":{"taskId":%q}}`, taskID))
	l.mu.Lock()
	seen := ls.seen
	l.mu.Unlock()
	if seen.IsZero() {
		t.Error("a tasks/get reached go-sdk with nothing: its session would expire under a polling client")
	}

	// A task whose session has ended is no one's: it ends, the gateway
	// keeps nothing of it, and another session still finds nothing.
	created = a.post(t, researchCall(6, false, "moons"))
	taskID = rpcResult(t, created)["task"].(map[string]any)["taskId"].(string)
	g.srv.tasks.mu.Lock()
	running := g.srv.tasks.byID[taskID]
	g.srv.tasks.mu.Unlock()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, a.url, nil)
	req.Header.Set("Mcp-Session-Id", a.session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	select {
	case <-running.done:
	case <-t.Context().Done():
		t.Fatal("the task of a deleted session is still running")
	}
	g.srv.tasks.mu.Lock()
	_, kept := g.srv.tasks.byID[taskID]
	g.srv.tasks.mu.Unlock()
	if kept {
		t.Error("the task of a deleted session is still kept")
	}
	if msg := b.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":%q}}`, taskID)); !strings.Contains(rpcErr(t, msg), "no task") {
		t.Errorf("tasks/get of an ended session's task from another: %v", msg)
	}
	if msg := b.post(t, `{"jsonrpc":"2.0","id":8,"method":"tasks/list"}`); len(rpcResult(t, msg)["tasks"].([]any)) != 0 {
		t.Errorf("another session's tasks/list after the first ended: %v", msg)
	}

	t.Run("stateless", func(t *testing.T) {
		g := newGateway(t, map[string]def{"everything": everything(t)}, nil)
		ts := g.serveHTTP(t, HTTPOptions{Stateless: true})
		p := &httpPeer{url: ts.URL + "/mcp"}
		if msg := p.post(t, researchCall(1, false, "tides")); !strings.Contains(rpcErr(t, msg), "tasks need a session") {
			t.Errorf("a task without sessions: %v", msg)
		}
		// Nor are tasks offered there.
		if caps := rpcResult(t, p.initialize(t))["capabilities"].(map[string]any); caps["tasks"] != nil {
			t.Errorf("stateless serving declares tasks: %v", caps["tasks"])
		}
	})
}

// TestIdentityTasks: serving with identity, a session's tasks are its
// user's. Another signed-in user who holds the session's id can neither
// start a task in it nor read, list, await or cancel its tasks; its own
// user can.
func TestIdentityTasks(t *testing.T) {
	ig := newIdentityGateway(t)
	alpha := &httpPeer{url: ig.url + "/mcp", token: ig.idp.Token(t, idptest.Alpha, idptest.Password)}
	alpha.initialize(t)
	echo := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"echo","server":"a","args":{"text":"%s"}},"task":{}}}`
	created := alpha.post(t, fmt.Sprintf(echo, "alpha's"))
	taskID := rpcResult(t, created)["task"].(map[string]any)["taskId"].(string)
	beta := &httpPeer{url: alpha.url, session: alpha.session, token: ig.idp.Token(t, idptest.Beta, idptest.Password)}
	calls := len(ig.calls.Recent())
	for _, body := range []string{
		fmt.Sprintf(echo, "beta's"),
		fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":%q}}`, taskID),
		fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":%q}}`, taskID),
		fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"tasks/cancel","params":{"taskId":%q}}`, taskID),
		`{"jsonrpc":"2.0","id":5,"method":"tasks/list"}`,
	} {
		msg := beta.post(t, body)
		if msg["result"] != nil || strings.Contains(fmt.Sprint(msg), taskID) {
			t.Errorf("beta on alpha's session: %s\n→ %v; want refused", body, msg)
		}
	}
	res := alpha.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":6,"method":"tasks/result","params":{"taskId":%q}}`, taskID))
	if text, _ := json.Marshal(rpcResult(t, res)["content"]); !strings.Contains(string(text), "alpha's") {
		t.Errorf("alpha's tasks/result = %v", res)
	}
	// Alpha's own call, and none of beta's.
	if n := len(ig.calls.Recent()) - calls; n > 1 {
		t.Errorf("%d calls made while beta tried alpha's session; want alpha's alone", n)
	}
}

// TestIdentityTaskRightAfterInitialize: a session is its initializer's
// from initialize's answer on. go-sdk answers notifications/initialized
// with 202 before it handles it, so a client's next request may come
// first; here the notification is not even sent, and the session's own
// user may make a task on it while another user still may not.
func TestIdentityTaskRightAfterInitialize(t *testing.T) {
	ig := newIdentityGateway(t)
	alpha := &httpPeer{url: ig.url + "/mcp", token: ig.idp.Token(t, idptest.Alpha, idptest.Password)}
	alpha.post(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	created := alpha.post(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp","arguments":{"tool":"echo","server":"a","args":{"text":"alpha's"}},"task":{}}}`)
	if res, _ := created["result"].(map[string]any); res["task"] == nil {
		t.Fatalf("alpha's task right after initialize: %v", created)
	}
	beta := &httpPeer{url: alpha.url, session: alpha.session, token: ig.idp.Token(t, idptest.Beta, idptest.Password)}
	if msg := beta.post(t, `{"jsonrpc":"2.0","id":2,"method":"tasks/list"}`); msg["result"] != nil {
		t.Errorf("beta's tasks/list on alpha's session: %v; want refused", msg)
	}
}

// TestClientTasksBounded: a session that makes task after task keeps at
// most maxKeptTasks of them, the oldest ended ones going first, and a ttl
// too large for a duration is the most a task may have, not an overflow
// that ends it at once.
func TestClientTasksBounded(t *testing.T) {
	g := newGateway(t, map[string]def{"f": fixture()}, nil)
	p := serveStdioWith(t, g.srv.MCP(), &StdioTransport{Server: g.srv}, "2025-11-25")
	var first, last string
	for i := range maxKeptTasks + 20 {
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mcp","arguments":{},"task":{}}}`, i+1))
		created, _ := p.await(t, float64(i+1))
		id := rpcResult(t, created)["task"].(map[string]any)["taskId"].(string)
		if i == 0 {
			first = id
		}
		last = id
		// Each ends before the next starts: a status answer is quick.
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":"r%d","method":"tasks/result","params":{"taskId":%q}}`, i, id))
		for m := p.recv(t); m["id"] != fmt.Sprintf("r%d", i); m = p.recv(t) {
		}
	}
	p.send(t, `{"jsonrpc":"2.0","id":"list","method":"tasks/list"}`)
	var list map[string]any
	for list = p.recv(t); list["id"] != "list"; list = p.recv(t) {
	}
	tasks := rpcResult(t, list)["tasks"].([]any)
	if len(tasks) != maxKeptTasks || tasks[len(tasks)-1].(map[string]any)["taskId"] != last {
		t.Errorf("tasks/list has %d tasks, the newest last? %v; want %d", len(tasks), tasks[len(tasks)-1], maxKeptTasks)
	}
	p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":"old","method":"tasks/get","params":{"taskId":%q}}`, first))
	var old map[string]any
	for old = p.recv(t); old["id"] != "old"; old = p.recv(t) {
	}
	if !strings.Contains(rpcErr(t, old), "no task") {
		t.Errorf("the oldest ended task is still kept: %v", old)
	}
	p.send(t, `{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"name":"mcp","arguments":{},"task":{"ttl":9300000000000}}}`)
	var huge map[string]any
	for huge = p.recv(t); huge["id"] != "huge"; huge = p.recv(t) {
	}
	if ttl := rpcResult(t, huge)["task"].(map[string]any)["ttl"]; ttl != float64(maxTaskTTL.Milliseconds()) {
		t.Errorf("a huge ttl became %v, want the most, %d", ttl, maxTaskTTL.Milliseconds())
	}
}
