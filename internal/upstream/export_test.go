package upstream

import (
	"context"
	"encoding/json"
	"errors"
)

// ListTasks asks name's server for its tasks (tasks/list, on the stdio
// fast path), for tests that check what a call did to them.
func ListTasks(ctx context.Context, p *Pool, name string) (json.RawMessage, error) {
	s := p.servers[name]
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil {
		return nil, errors.New("not connected")
	}
	_, rc, _ := sess.taskSide()
	if rc == nil {
		return nil, errors.New("no requests beside go-sdk's on this connection")
	}
	resp, err := rc.callRaw(ctx, "tasks/list", []byte(`{}`), nil)
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// TaskBacklog is what name's connection keeps for tasks: the statuses kept
// for tasks not yet waited for, and the calls waiting.
func TaskBacklog(p *Pool, name string) int {
	s := p.servers[name]
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil || sess.fast == nil {
		return -1
	}
	t := &sess.fast.tasks
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.early) + len(t.waiting) + t.creating
}
