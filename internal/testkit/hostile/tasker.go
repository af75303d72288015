package hostile

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
)

// Tasker is a server of MCP 2025-11-25 tasks (go-sdk has none, so it
// speaks JSON-RPC over stdio itself) whose one tool, "slow", runs only as
// a task, and which floods the client with the status of tasks that are
// not the call's: TaskerOthers of them before it answers the call that
// creates the task, and one more, marked NotYours, while the client waits
// for the result. The call's own task reports "working: mine" before its
// creation is answered, and its result is the text "done".
const Tasker = "tasker"

// TaskerOthers is how many other tasks' statuses Tasker sends.
const TaskerOthers = 500

// NotYours is in the status message of every task Tasker reports that
// is not the call's.
const NotYours = "not yours"

func init() { modes[Tasker] = runTasker }

func runTasker(ctx context.Context) error {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := json.NewEncoder(os.Stdout)
	status := func(id, st, msg string) error {
		return out.Encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks/status",
			"params": map[string]any{"taskId": id, "status": st, "statusMessage": msg, "createdAt": "2026-01-01T00:00:00Z",
				"lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": 60000}})
	}
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue // notifications
		}
		var result any = map[string]any{}
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-11-25", "serverInfo": map[string]any{"name": "tasker", "version": "1"},
				"capabilities": map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "slow", "inputSchema": map[string]any{"type": "object"},
				"execution": map[string]any{"taskSupport": "required"}}}}
		case "tools/call":
			for i := range TaskerOthers {
				if err := status(fmt.Sprintf("other-%d", i), "working", NotYours); err != nil {
					return err
				}
			}
			if err := status("mine", "working", "mine"); err != nil {
				return err
			}
			result = map[string]any{"task": map[string]any{"taskId": "mine", "status": "working", "ttl": 60000,
				"createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z"}}
		case "tasks/result":
			if err := status("other-x", "completed", NotYours); err != nil {
				return err
			}
			if err := status("mine", "completed", "mine, done"); err != nil {
				return err
			}
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}
		}
		if err := out.Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result}); err != nil {
			return err
		}
	}
	return in.Err()
}
