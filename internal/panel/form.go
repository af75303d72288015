package panel

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/switchboard-mcp/switchboard/internal/callargs"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// form is a tool's call form: one field per parameter of its input
// schema, required ones first. Each value is typed by the schema as
// switchboard call types key=value (package callargs): 3 is a number for a
// number parameter and a string for a string one, JSON for arrays and
// objects; a field left empty is left out.
type form struct {
	schema *callargs.Schema
	tool   string // as errors name it: "get-sum" on "everything"
	fields []field
	at     int
}

type field struct {
	name, label string // label: the name, * when required, and the type
	help        string // the parameter's description
	in          input
}

func newForm(m *Model, t *proxy.ToolDetail) *form {
	f := &form{schema: callargs.Parse(t.InputSchema), tool: fmt.Sprintf("%q on %q", t.Name, t.Server)}
	var req, opt []string
	for _, n := range f.schema.Names() {
		if f.schema.IsRequired(n) {
			req = append(req, n)
		} else {
			opt = append(opt, n)
		}
	}
	for _, n := range append(req, opt...) {
		label := n
		if f.schema.IsRequired(n) {
			label += "*"
		}
		if ts := f.schema.Types(n); len(ts) > 0 {
			label += " (" + callargs.TypeList(ts) + ")"
		}
		in := m.newInput("> ", "")
		f.fields = append(f.fields, field{name: n, label: label, help: oneLine(f.schema.Describe(n)), in: in})
	}
	return f
}

// focus moves the focus to field i (clamped).
func (f *form) focus(i int) {
	if len(f.fields) == 0 {
		return
	}
	f.at = clampSel(i, len(f.fields))
	for j := range f.fields {
		if j == f.at {
			f.fields[j].in.Focus()
		} else {
			f.fields[j].in.Blur()
		}
	}
}

// update gives a key or a paste to the focused field.
func (f *form) update(msg tea.Msg) {
	if len(f.fields) > 0 {
		f.fields[f.at].in.update(msg)
	}
}

// args builds the call's arguments, or says which one does not fit.
func (f *form) args() (map[string]any, error) {
	var pairs []string
	for _, fl := range f.fields {
		if v := fl.in.Value(); v != "" {
			pairs = append(pairs, fl.name+"="+v)
		}
	}
	args, err := callargs.Args(pairs, f.schema, f.tool)
	return args, err
}

// view renders the form in width columns.
func (f *form) view(m *Model, width int) []string {
	if len(f.fields) == 0 {
		return []string{"This tool takes no arguments.", "", m.pal.Dim("enter calls it")}
	}
	var lines []string
	for i := range f.fields {
		fl := &f.fields[i]
		label := fl.label
		if i == f.at {
			label = m.pal.Head(label)
		}
		lines = append(lines, label)
		if fl.help != "" {
			lines = append(lines, "  "+m.pal.Dim(fl.help))
		}
		fl.in.width = max(10, width-8)
		lines = append(lines, "  "+fl.in.View(m.pal))
	}
	return lines
}

// oneLine is the first line of s.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
