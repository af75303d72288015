package panel

import (
	"context"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/switchboard-mcp/switchboard/front"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// Messages: what the panel's commands, which run off the UI goroutine,
// bring back.
type (
	tickMsg   struct{}
	statusMsg struct {
		status front.AdminStatus
		err    error
	}
	callsMsg struct {
		calls []proxy.CallRecord
		err   error
	}
	toolsMsg struct {
		seq   int
		tools []proxy.ToolInfo
		err   error
	}
	describeMsg struct {
		tool *proxy.ToolDetail
		err  error
	}
	resultMsg struct {
		result *proxy.Result
		title  string
	}
	doneMsg struct {
		text string
		err  error
	}
)

// tick schedules the next refresh of status and calls.
func (m *Model) tick() tea.Cmd {
	if m.opts.Refresh < 0 {
		return nil
	}
	return tea.Tick(m.opts.Refresh, func(time.Time) tea.Msg { return tickMsg{} })
}

// refresh reads status and calls again, and, attached, the calls waiting
// for an approver group.
func (m *Model) refresh() tea.Cmd {
	b, ctx := m.b, m.ctx
	return tea.Batch(
		m.loadApprovals(),
		func() tea.Msg {
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			st, err := b.Status(ctx)
			return statusMsg{status: st, err: err}
		},
		func() tea.Msg {
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			calls, err := b.Calls(ctx)
			return callsMsg{calls: calls, err: err}
		},
	)
}

// loadTools lists the tools the tools screen shows: the search's matches
// across every server when there is a query, else the chosen server's
// tools. Each load supersedes the ones before it.
func (m *Model) loadTools() tea.Cmd {
	l := m.b.Local()
	if l == nil {
		return nil
	}
	m.searchSeq++
	seq, query, server := m.searchSeq, strings.TrimSpace(m.search.Value()), m.toolServer
	m.toolSel = 0
	if query == "" && server == "" {
		m.tools, m.toolsErr, m.toolsBusy = nil, nil, false
		return nil
	}
	m.toolsBusy = true
	ctx, cancel := context.WithTimeout(m.ctx, m.opts.Timeout)
	return func() tea.Msg {
		defer cancel()
		var tools []proxy.ToolInfo
		var err error
		if query != "" {
			tools, err = l.Search(ctx, query)
		} else {
			tools, err = l.Connect(ctx, server)
		}
		return toolsMsg{seq: seq, tools: tools, err: err}
	}
}

// describe fetches a tool's description and schema.
func (m *Model) describe(server, tool string) tea.Cmd {
	l := m.b.Local()
	m.busy, m.msg = "describing "+tool+"…", ""
	ctx, cancel := context.WithTimeout(m.ctx, m.opts.Timeout)
	return func() tea.Msg {
		defer cancel()
		t, err := l.Describe(ctx, server, tool)
		return describeMsg{tool: t, err: err}
	}
}

// run runs an action off the UI goroutine, showing busy meanwhile and its
// outcome after.
func (m *Model) run(busy string, f func(ctx context.Context) (string, error)) tea.Cmd {
	if m.busy != "" {
		m.say(nil, "wait: "+m.busy)
		return nil
	}
	m.busy, m.msg = busy, ""
	ctx, cancel := context.WithTimeout(m.ctx, m.opts.Timeout)
	return func() tea.Msg {
		defer cancel()
		text, err := f(ctx)
		return doneMsg{text: text, err: err}
	}
}
