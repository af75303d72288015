package panel

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/switchboard-mcp/switchboard/front"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// tab is one of the panel's screens.
type tab int

const (
	tabServers tab = iota
	tabTools
	tabCalls
	tabProblems
	tabApprovals // attached only
)

var tabNames = []string{"servers", "tools", "calls", "problems", "approvals"}

// page is where the tools screen is: the list, a tool's description, its
// call form, or the call's result.
type page int

const (
	pageList page = iota
	pageDescribe
	pageForm
	pageResult
)

// Model is the panel's bubbletea model.
type Model struct {
	ctx  context.Context
	b    Backend
	opts Options
	pal  Palette

	width, height int
	tab           tab
	page          page

	status    front.AdminStatus
	statusErr error
	loaded    bool // the first status has come
	calls     []proxy.CallRecord
	srvSel    int
	callSel   int
	probSel   int

	// The tools screen.
	search      input
	searchSeq   int    // the latest search sent; older answers are dropped
	toolServer  string // the server whose tools are listed when not searching
	tools       []proxy.ToolInfo
	toolsErr    error
	toolsBusy   bool
	toolSel     int
	detail      *proxy.ToolDetail
	form        *form
	result      *proxy.Result
	resultTitle string
	vp          scroller // the description or the result

	// The approvals screen, attached only: the calls waiting for an
	// approver group that the token may decide, oldest first.
	appr       []Approval
	apprErr    error // the gateway refused the list
	apprLoaded bool
	apprSel    int
	confirm    *decision // a or d pressed: the next key confirms or cancels

	// firstRunLines is config.FirstRun of the other hosts' servers, read
	// once, the first time a local panel shows no server.
	firstRunLines []string
	firstRunRead  bool

	busy     string // the operation running, shown in the message line
	msg      string // the last action's outcome
	msgBad   bool
	quitting bool
}

func newModel(ctx context.Context, b Backend, opts Options) *Model {
	m := &Model{ctx: ctx, b: b, opts: opts, pal: opts.Palette, width: 80, height: 24}
	m.search = m.newInput("search: ", "words that say what the tool does")
	m.vp.setSize(80, 10)
	return m
}

// newInput is a one-line text input.
func (m *Model) newInput(prompt, placeholder string) input {
	return input{prompt: prompt, placeholder: placeholder, limit: 4096, width: 10}
}

// Init implements tea.Model: read status and calls.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.refresh(), m.tick())
}

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.PasteMsg:
		if m.typing() {
			return m, m.typed(msg)
		}
		return m, nil
	case tickMsg:
		return m, tea.Batch(m.refresh(), m.tick())
	case statusMsg:
		m.status, m.statusErr, m.loaded = msg.status, msg.err, true
		m.srvSel = clampSel(m.srvSel, len(m.status.Servers))
		m.probSel = clampSel(m.probSel, len(m.status.Problems))
		return m, nil
	case callsMsg:
		if msg.err == nil {
			m.calls = msg.calls
			m.callSel = clampSel(m.callSel, len(m.calls))
		}
		return m, nil
	case approvalsMsg:
		m.gotApprovals(msg)
		return m, nil
	case toolsMsg:
		if msg.seq != m.searchSeq {
			return m, nil // an answer to an older search
		}
		m.tools, m.toolsErr, m.toolsBusy = msg.tools, msg.err, false
		m.toolSel = clampSel(m.toolSel, len(m.tools))
		return m, nil
	case describeMsg:
		m.busy = ""
		if msg.err != nil {
			m.say(msg.err)
			return m, nil
		}
		m.detail, m.page = msg.tool, pageDescribe
		m.setViewport(m.describeText())
		return m, nil
	case resultMsg:
		m.busy = ""
		m.result, m.resultTitle, m.page = msg.result, msg.title, pageResult
		m.setViewport(m.resultText())
		return m, m.refresh()
	case doneMsg:
		m.busy = ""
		m.say(msg.err, msg.text)
		return m, m.refresh()
	}
	return m, nil
}

// key handles a key press.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	if k.String() == "ctrl+c" {
		m.quitting = true
		return tea.Quit
	}
	if m.confirm != nil {
		return m.confirmKey(k)
	}
	if m.typing() {
		return m.typingKey(k)
	}
	switch k.String() {
	case "q":
		m.quitting = true
		return tea.Quit
	case "tab":
		return m.switchTab(m.nextTab(1))
	case "shift+tab":
		return m.switchTab(m.nextTab(-1))
	case "1", "2", "3", "4", "5":
		return m.switchTab(tab(k.String()[0] - '1'))
	}
	switch m.tab {
	case tabServers:
		return m.serversKey(k)
	case tabTools:
		return m.toolsKey(k)
	case tabCalls:
		m.callSel = moveSel(m.callSel, len(m.calls), k.String())
	case tabProblems:
		m.probSel = moveSel(m.probSel, len(m.status.Problems), k.String())
	case tabApprovals:
		return m.approvalsKey(k)
	}
	return nil
}

// nextTab is the screen after (dir 1) or before (-1) this one, past the
// screens this panel has not: tools when attached, approvals when local.
func (m *Model) nextTab(dir int) tab {
	t := int(m.tab)
	for {
		t = (t + dir + len(tabNames)) % len(tabNames)
		if m.has(tab(t)) {
			return tab(t)
		}
	}
}

// has reports whether the panel has screen t: tools only when local,
// approvals only attached.
func (m *Model) has(t tab) bool {
	switch t {
	case tabTools:
		return m.b.Local() != nil
	case tabApprovals:
		_, ok := m.b.(approvals)
		return ok
	}
	return true
}

// typing reports whether keys go to a text input.
func (m *Model) typing() bool {
	return m.tab == tabTools && ((m.page == pageList && m.search.Focused()) || m.page == pageForm)
}

func (m *Model) switchTab(t tab) tea.Cmd {
	if t == tabTools && !m.has(t) {
		m.say(ErrReadOnly)
		return nil
	}
	if t == tabApprovals && !m.has(t) {
		m.say(errNoApprovals)
		return nil
	}
	m.tab = t
	m.msg = ""
	if t == tabApprovals {
		return m.loadApprovals()
	}
	if t == tabTools && m.page == pageList && m.toolServer == "" && m.search.Value() == "" {
		m.search.Focus()
	}
	return nil
}

func (m *Model) serversKey(k tea.KeyPressMsg) tea.Cmd {
	if len(m.status.Servers) == 0 {
		return nil
	}
	s := m.status.Servers[m.srvSel]
	local := m.b.Local()
	needLocal := func(f func(*Local) tea.Cmd) tea.Cmd {
		if local == nil {
			m.say(ErrReadOnly)
			return nil
		}
		return f(local)
	}
	switch k.String() {
	case "enter":
		return needLocal(func(l *Local) tea.Cmd { return m.showServerTools(s.Name) })
	case "c":
		return needLocal(func(l *Local) tea.Cmd {
			return m.run(fmt.Sprintf("connecting %s…", s.Name), func(ctx context.Context) (string, error) {
				tools, err := l.Connect(ctx, s.Name)
				return fmt.Sprintf("connected %s: %s", s.Name, plural(len(tools), "tool")), err
			})
		})
	case "r":
		return m.run(fmt.Sprintf("reconnecting %s…", s.Name), func(ctx context.Context) (string, error) {
			return fmt.Sprintf("reconnected %s", s.Name), m.b.Reconnect(ctx, s.Name)
		})
	case "e":
		return needLocal(func(l *Local) tea.Cmd {
			disable := s.State != "disabled"
			verb := map[bool]string{true: "disabled", false: "enabled"}[disable]
			return m.run(fmt.Sprintf("writing %s…", s.Name), func(ctx context.Context) (string, error) {
				path, err := l.SetDisabled(ctx, s.Name, disable)
				return fmt.Sprintf("%s %s in %s", verb, s.Name, m.tilde(path)), err
			})
		})
	case "l":
		return needLocal(func(l *Local) tea.Cmd {
			if l.Login == nil {
				m.say(fmt.Errorf("log in from a shell: switchboard auth login %s", s.Name))
				return nil
			}
			return m.run(fmt.Sprintf("logging in to %s (finish in the browser)…", s.Name), func(ctx context.Context) (string, error) {
				if err := l.Login(ctx, s.Name); err != nil {
					return "", err
				}
				// The new tokens are used from the next connection on.
				return fmt.Sprintf("logged in to %s", s.Name), l.Reconnect(ctx, s.Name)
			})
		})
	case "i":
		return needLocal(func(l *Local) tea.Cmd {
			return m.run(fmt.Sprintf("indexing %s…", s.Name), func(ctx context.Context) (string, error) {
				r, err := l.Index(ctx, s.Name)
				return fmt.Sprintf("indexed %s: %s, %s, %s", s.Name, plural(r.Tools, "tool"), plural(r.Resources, "resource"), plural(r.Prompts, "prompt")), err
			})
		})
	default:
		m.srvSel = moveSel(m.srvSel, len(m.status.Servers), k.String())
	}
	return nil
}

// showServerTools lists a server's tools on the tools screen, connecting
// it.
func (m *Model) showServerTools(server string) tea.Cmd {
	m.tab, m.page, m.toolServer = tabTools, pageList, server
	m.search.SetValue("")
	m.search.Blur()
	m.toolSel = 0
	return m.loadTools()
}

func (m *Model) toolsKey(k tea.KeyPressMsg) tea.Cmd {
	switch m.page {
	case pageList:
		switch k.String() {
		case "/":
			m.search.Focus()
			return nil
		case "esc":
			if m.toolServer != "" {
				m.tab, m.toolServer, m.tools = tabServers, "", nil
			}
			return nil
		case "enter":
			if len(m.tools) == 0 {
				return nil
			}
			t := m.tools[m.toolSel]
			return m.describe(t.Server, t.Name)
		}
		m.toolSel = moveSel(m.toolSel, len(m.tools), k.String())
	case pageDescribe:
		switch k.String() {
		case "esc":
			m.page = pageList
			return nil
		case "enter", "c":
			m.form = newForm(m, m.detail)
			m.page = pageForm
			m.layout()
			m.form.focus(0)
			return nil
		}
		return m.scroll(k)
	case pageResult:
		switch k.String() {
		case "esc":
			m.page = pageDescribe
			m.setViewport(m.describeText())
			return nil
		case "enter", "c":
			m.page = pageForm
			m.form.focus(m.form.at)
			return nil
		}
		return m.scroll(k)
	}
	return nil
}

// typingKey handles a key while a text input has the focus.
func (m *Model) typingKey(k tea.KeyPressMsg) tea.Cmd {
	if m.page == pageForm {
		return m.formKey(k)
	}
	switch k.String() {
	case "esc", "enter", "down", "tab":
		m.search.Blur()
		return nil
	case "/":
		// The key that opens the search, pressed again in it (the help
		// line names it): not part of the query.
		return nil
	}
	return m.typed(k)
}

// typed gives a key or a paste to the focused input: the search, whose
// change starts a new search, or the form's field.
func (m *Model) typed(msg tea.Msg) tea.Cmd {
	if m.page == pageForm {
		m.form.update(msg)
		return nil
	}
	if m.search.update(msg) {
		return m.loadTools()
	}
	return nil
}

func (m *Model) formKey(k tea.KeyPressMsg) tea.Cmd {
	f := m.form
	switch k.String() {
	case "esc":
		m.page = pageDescribe
		m.setViewport(m.describeText())
		return nil
	case "tab", "down":
		f.focus(f.at + 1)
		return nil
	case "shift+tab", "up":
		f.focus(f.at - 1)
		return nil
	case "ctrl+s":
		return m.submit()
	case "enter":
		if f.at >= len(f.fields)-1 {
			return m.submit()
		}
		f.focus(f.at + 1)
		return nil
	}
	f.update(k)
	return nil
}

// submit calls the tool with the form's arguments, once they fit its
// schema.
func (m *Model) submit() tea.Cmd {
	if m.busy != "" {
		return nil
	}
	args, err := m.form.args()
	if err != nil {
		m.say(err)
		return nil
	}
	l, t := m.b.Local(), m.detail
	title := fmt.Sprintf("%s on %s", t.Name, t.Server)
	m.busy, m.msg = fmt.Sprintf("calling %s…", title), ""
	ctx, cancel := context.WithTimeout(m.ctx, m.opts.Timeout)
	return func() tea.Msg {
		defer cancel()
		return resultMsg{result: l.Call(ctx, t.Server, t.Name, args), title: title}
	}
}

func (m *Model) scroll(k tea.KeyPressMsg) tea.Cmd {
	m.vp.key(k.String())
	return nil
}

// say shows an action's outcome: the error if there is one, else text.
func (m *Model) say(err error, text ...string) {
	m.msgBad = err != nil
	switch {
	case err != nil && errors.Is(err, context.Canceled):
		m.msg = "canceled"
	case err != nil:
		m.msg = err.Error()
	case len(text) > 0:
		m.msg = text[0]
	}
}

func clampSel(sel, n int) int {
	return max(0, min(sel, n-1))
}

// moveSel moves a selection by a navigation key.
func moveSel(sel, n int, k string) int {
	switch k {
	case "up", "k":
		sel--
	case "down", "j":
		sel++
	case "home", "g":
		sel = 0
	case "end", "G":
		sel = n - 1
	case "pgup":
		sel -= 10
	case "pgdown":
		sel += 10
	}
	return clampSel(sel, n)
}

// plural says n of a noun given in the singular: "1 tool", "2 tools",
// "3 matches" (a noun ending in s, x, z, ch or sh takes "es").
func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	for _, end := range []string{"s", "x", "z", "ch", "sh"} {
		if strings.HasSuffix(one, end) {
			return fmt.Sprintf("%d %ses", n, one)
		}
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// firstRun is what a first run says in the panel: which other hosts hold
// how many servers, and the import commands (config.FirstRun). An
// attached panel says nothing: the gateway's hosts are not this machine's.
func (m *Model) firstRun() []string {
	if !m.firstRunRead {
		m.firstRunRead = true
		if l := m.b.Local(); l != nil {
			m.firstRunLines = l.FirstRun()
		}
	}
	return m.firstRunLines
}
