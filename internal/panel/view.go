package panel

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// Screen layout: a title line with the tabs, a rule, the body, the
// message line (what runs, or how the last action ended) and the help
// line. Every line is cut to the width, so nothing wraps.
const chrome = 4

func (m *Model) bodyHeight() int { return max(1, m.height-chrome) }

// layout fits the scrolling parts to the window.
func (m *Model) layout() {
	m.vp.setSize(max(10, m.width), max(1, m.bodyHeight()-1))
	m.search.width = max(10, m.width-len(m.search.prompt)-2)
}

// View implements tea.Model: the screen, on the terminal's alternate
// screen. The last view, once the user quits, is empty: the terminal is
// left as it was.
func (m *Model) View() tea.View {
	var v tea.View
	if !m.quitting {
		v.SetContent(m.screen())
	}
	v.AltScreen = true
	return v
}

// screen renders the whole screen.
func (m *Model) screen() string {
	var body []string
	switch m.tab {
	case tabServers:
		body = m.serversView()
	case tabTools:
		body = m.toolsView()
	case tabCalls:
		body = m.callsView()
	case tabProblems:
		body = m.problemsView()
	case tabApprovals:
		body = m.approvalsView()
	}
	h := m.bodyHeight()
	if len(body) > h {
		body = body[:h]
	}
	for len(body) < h {
		body = append(body, "")
	}
	lines := append([]string{m.titleLine(), m.pal.Dim(strings.Repeat("─", max(1, m.width)))}, body...)
	lines = append(lines, m.messageLine(), m.pal.Dim(m.helpLine()))
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "…")
	}
	return strings.Join(lines, "\n")
}

func (m *Model) titleLine() string {
	parts := []string{m.pal.Title("Switchboard") + " " + m.pal.Dim(m.b.Where())}
	for i, n := range tabNames {
		if !m.has(tab(i)) {
			continue
		}
		// "4:problems", not "4 problems": the key that shows the screen
		// must not read as a count (issue 30); the count, where there is
		// one, is in parentheses.
		label := fmt.Sprintf("%d:%s", i+1, n)
		if tab(i) == tabProblems && len(m.status.Problems) > 0 {
			label += fmt.Sprintf(" (%d)", len(m.status.Problems))
		}
		if tab(i) == tabApprovals {
			label += m.approvalsCount()
		}
		if tab(i) == m.tab {
			label = m.pal.Selected("[" + label + "]")
		} else {
			label = " " + label + " "
		}
		parts = append(parts, label)
	}
	return strings.Join(parts, " ")
}

func (m *Model) messageLine() string {
	switch {
	case m.confirm != nil:
		return m.pal.Warn(m.confirmLine())
	case m.busy != "":
		return m.pal.Warn(m.busy)
	case m.msg != "" && m.msgBad:
		return m.pal.Bad(oneLine(m.msg))
	case m.msg != "":
		return m.pal.OK(oneLine(m.msg))
	case m.statusErr != nil:
		return m.pal.Bad(oneLine(m.statusErr.Error()))
	}
	return ""
}

func (m *Model) helpLine() string {
	local := m.b.Local() != nil
	switch {
	case m.tab == tabServers && local:
		return "↑↓ select · enter tools · c connect · r reconnect · e enable/disable · l login · i index · tab screens · q quit"
	case m.tab == tabServers:
		return "↑↓ select · r reconnect · tab screens · q quit (attached: read-only)"
	case m.tab == tabApprovals:
		return "↑↓ select · a allow · d deny (then y) · tab screens · q quit"
	case m.tab != tabTools:
		return "↑↓ select · tab screens · q quit"
	}
	switch m.page {
	case pageDescribe:
		return "enter call · ↑↓ scroll · esc back · tab screens · q quit"
	case pageForm:
		return "tab/↓ next · shift+tab/↑ previous · enter next, or call on the last · ctrl+s call · esc back · ctrl+c quit"
	case pageResult:
		return "↑↓ scroll · enter call again · esc back · tab screens · q quit"
	}
	if m.search.Focused() {
		return "type to search every server · enter or ↓ to the list · esc stop typing · ctrl+c quit"
	}
	return "/ search · ↑↓ select · enter describe · esc back · tab screens · q quit"
}

// table renders rows under a header, columns as wide as their widest
// cell, with the selected row marked (› and reversed) and kept in view
// within height lines. style, if set, styles a cell after padding.
func (m *Model) table(header []string, rows [][]string, sel, height int, style func(row, col int, s string) string) []string {
	widths := make([]int, len(header))
	for _, r := range append([][]string{header}, rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	line := func(r []string, row int) string {
		cells := make([]string, len(r))
		for i, c := range r {
			pad := c
			if i < len(r)-1 {
				pad += strings.Repeat(" ", widths[i]-ansi.StringWidth(c))
			}
			if style != nil && row >= 0 {
				pad = style(row, i, pad)
			}
			cells[i] = pad
		}
		return strings.Join(cells, "  ")
	}
	out := []string{"  " + m.pal.Head(line(header, -1))}
	first := 0
	if room := height - 1; room > 0 && sel >= room {
		first = sel - room + 1
	}
	for i := first; i < len(rows) && len(out) < height; i++ {
		if i == sel {
			out = append(out, m.pal.Selected("› "+ansi.Strip(line(rows[i], -1))))
		} else {
			out = append(out, "  "+line(rows[i], i))
		}
	}
	return out
}

func (m *Model) serversView() []string {
	if !m.loaded {
		return []string{"reading status…"}
	}
	if len(m.status.Servers) == 0 {
		out := []string{"No servers are configured.", "", "Add one from a shell: switchboard add NAME -- COMMAND ARGS…"}
		if lines := m.firstRun(); len(lines) > 0 {
			out = append(append(out, ""), lines...)
		}
		return out
	}
	var rows [][]string
	for _, s := range m.status.Servers {
		tools := "?"
		if s.Tools >= 0 {
			tools = fmt.Sprint(s.Tools)
		}
		if s.Quarantined > 0 {
			tools += fmt.Sprintf(" (%d changed)", s.Quarantined)
		}
		rows = append(rows, []string{s.Name, s.Transport, shownState(s.State), tools, m.age(s.LastCall), m.tilde(s.Source)})
	}
	s := m.status.Servers[m.srvSel]
	detail := []string{""}
	if s.Headline != "" {
		detail = append(detail, s.Name+": "+s.Headline)
	}
	if s.Error != "" {
		what := "last error"
		if s.ErrorClass != "" {
			what += " (" + s.ErrorClass
			if !s.ErrorAt.IsZero() {
				what += ", " + m.age(s.ErrorAt)
			}
			what += ")"
		}
		detail = append(detail, m.wrap(m.pal.Bad(what)+": "+s.Error, 4)...)
	}
	if s.Quarantined > 0 {
		// Pinned tools whose definition the server changed: not callable
		// until approved (docs/policy.md).
		detail = append(detail, m.wrap(m.pal.Bad(fmt.Sprintf("%d quarantined", s.Quarantined))+
			fmt.Sprintf(": the server changed what these tools say or take; see what changed and accept it with: switchboard approve %s", s.Name), 4)...)
	}
	for _, w := range s.Warnings {
		detail = append(detail, m.wrap("warning: "+w, 4)...)
	}
	// The table gets what the detail leaves, and at least half the room.
	h := m.bodyHeight()
	tableRoom := max(min(len(rows)+1, (h+1)/2), h-len(detail))
	body := m.table([]string{"SERVER", "TRANSPORT", "STATE", "TOOLS", "LAST CALL", "SOURCE"}, rows, m.srvSel,
		max(2, tableRoom), func(row, col int, s string) string {
			if col == 2 {
				return m.pal.State(strings.TrimRight(s, " ")) + s[len(strings.TrimRight(s, " ")):]
			}
			return s
		})
	return append(body, detail...)
}

// shownState is a server's state as the panel names it: a server that is
// not connected now, and did not fail, is idle.
func shownState(s string) string {
	if s == "disconnected" {
		return "idle"
	}
	return s
}

func (m *Model) toolsView() []string {
	switch m.page {
	case pageDescribe, pageResult:
		return m.vp.view()
	case pageForm:
		head := fmt.Sprintf("call %s on %s", m.detail.Name, m.detail.Server)
		lines := m.form.view(m, m.width)
		// Keep the focused field in view.
		room := m.bodyHeight() - 2
		if len(lines) > room {
			at := 0
			for i := 0; i < m.form.at; i++ {
				at += 2
				if m.form.fields[i].help != "" {
					at++
				}
			}
			lines = lines[max(0, min(at, len(lines)-room)):]
		}
		return append([]string{m.pal.Head(head), ""}, lines...)
	}
	out := []string{m.search.View(m.pal)}
	q := strings.TrimSpace(m.search.Value())
	switch {
	case m.toolsBusy && len(m.tools) == 0:
		out = append(out, m.pal.Dim("searching…"))
	case m.toolsErr != nil:
		return append(out, m.wrap(m.pal.Bad(m.toolsErr.Error()), 6)...)
	case q != "":
		out = append(out, m.pal.Dim(fmt.Sprintf("%s for %q across every server", plural(len(m.tools), "match"), q)))
	case m.toolServer != "":
		out = append(out, m.pal.Dim(fmt.Sprintf("tools of %s (%d); / searches every server", m.toolServer, len(m.tools))))
	default:
		return append(out, "", "Type what the tool should do to search every server's tools,",
			"or choose a server on the servers screen (1) and press enter.")
	}
	if len(m.tools) == 0 {
		return out
	}
	var rows [][]string
	for _, t := range m.tools {
		rows = append(rows, []string{t.Server, t.Name, oneLine(t.Description)})
	}
	return append(out, m.table([]string{"SERVER", "TOOL", "DESCRIPTION"}, rows, m.toolSel, m.bodyHeight()-2, nil)...)
}

// describeText is a tool's description and input schema.
func (m *Model) describeText() string {
	t := m.detail
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s", m.pal.Head(t.Name), t.Server)
	if t.Title != "" {
		fmt.Fprintf(&b, ": %s", t.Title)
	}
	b.WriteString("\n")
	if a := t.AnnotationText(); a != "" {
		b.WriteString(m.pal.Dim(a) + "\n")
	}
	b.WriteString("\n")
	if t.Description != "" {
		b.WriteString(ansi.Wrap(strings.TrimSpace(t.Description), max(20, m.width), " ") + "\n\n")
	}
	b.WriteString(m.pal.Head("input schema") + "\n")
	schema, _ := json.MarshalIndent(t.InputSchema, "", "  ")
	if t.InputSchema == nil {
		schema = []byte("(none: the tool takes no arguments)")
	}
	b.WriteString(string(schema))
	return b.String()
}

// resultText is a call's result: the text the mcp tool returns, already
// bounded by settings.output, and the files what did not fit went to.
func (m *Model) resultText() string {
	r := m.result
	var b strings.Builder
	if r.IsError {
		fmt.Fprintf(&b, "%s %s\n", m.pal.Bad("error from"), m.resultTitle)
	} else {
		fmt.Fprintf(&b, "%s %s\n", m.pal.OK("result of"), m.resultTitle)
	}
	for _, s := range r.Details.Spills {
		// The path on lines of its own, whole, to be copied.
		fmt.Fprintf(&b, "%s (%s: %s):\n%s\n", m.pal.Warn("spilled to a file"), size(s.Bytes), s.Reason, ansi.Hardwrap(s.Path, max(20, m.width), true))
	}
	b.WriteString("\n")
	b.WriteString(ansi.Wrap(strings.TrimRight(ansi.Strip(r.Text), "\n"), max(20, m.width), ""))
	for _, img := range r.Images {
		fmt.Fprintf(&b, "\n(an image of %d bytes, %s)", len(img.Data), img.MIMEType)
	}
	return b.String()
}

func (m *Model) setViewport(s string) {
	m.layout()
	m.vp.setContent(s)
}

func (m *Model) callsView() []string {
	if len(m.calls) == 0 {
		return []string{"No calls yet.", "", "Calls made by this panel (and, attached, by the gateway's clients) show here."}
	}
	var rows [][]string
	for _, c := range m.calls {
		rows = append(rows, []string{m.age(c.Start), c.Server, c.Tool, duration(c.Duration), outcome(c), size(c.ArgsBytes), size(c.ResultBytes)})
	}
	return m.table([]string{"STARTED", "SERVER", "TOOL", "TOOK", "OUTCOME", "ARGS", "RESULT"}, rows, m.callSel, m.bodyHeight(),
		func(row, col int, s string) string {
			if col != 4 {
				return s
			}
			switch m.calls[row].Outcome {
			case proxy.CallOK:
				return m.pal.OK(s)
			case proxy.CallCanceled:
				return m.pal.Warn(s)
			}
			return m.pal.Bad(s)
		})
}

func outcome(c proxy.CallRecord) string {
	if c.ErrorClass != "" && c.ErrorClass != c.Outcome {
		return c.Outcome + " (" + c.ErrorClass + ")"
	}
	return c.Outcome
}

func (m *Model) problemsView() []string {
	var out []string
	if m.status.Blocked {
		out = append(out, m.pal.Bad("No server is usable until the errors below are fixed."), "")
	}
	if len(m.status.Problems) == 0 {
		return append(out, "No configuration problems.")
	}
	for i, p := range m.status.Problems {
		where := m.tilde(p.File)
		if p.Line > 0 {
			where += fmt.Sprintf(":%d:%d", p.Line, p.Col)
		}
		if p.Path != "" {
			where += ": " + p.Path
		}
		sev := m.pal.Warn(string(p.Severity))
		if p.Severity == config.SeverityError {
			sev = m.pal.Bad(string(p.Severity))
		}
		mark := "  "
		if i == m.probSel {
			mark = m.pal.Selected("›") + " "
		}
		out = append(out, m.wrap(mark+sev+" "+where+": "+p.Message, 6)...)
	}
	return out
}

// wrap wraps s to the width, at most n lines, indenting the lines after
// the first by two columns.
func (m *Model) wrap(s string, n int) []string {
	lines := strings.Split(ansi.Wrap(s, max(20, m.width-2), " "), "\n")
	for i := 1; i < len(lines); i++ {
		lines[i] = "  " + lines[i]
	}
	if len(lines) > n {
		lines = append(lines[:n-1], lines[n-1]+"…")
	}
	return lines
}

// age says how long ago t was, "-" for never.
func (m *Model) age(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := m.opts.Now().Sub(t)
	switch {
	case d < time.Second:
		return "now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

func duration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

func size(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// tilde shows a path under the home directory as ~/….
func (m *Model) tilde(p string) string {
	if h := m.opts.Home; h != "" && strings.HasPrefix(p, h+"/") {
		return "~" + p[len(h):]
	}
	return p
}
