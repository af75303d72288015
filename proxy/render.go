package proxy

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/bound"
)

// The renderers below turn what an operation gathered (from the servers and
// the catalog) into its result: the text a model reads and the details a
// program reads, saying the same thing. They do no I/O; the engine bounds
// their results to settings.output (spilling what does not fit) before it
// returns them.

// MaxDetailsError bounds the error of the details, in characters; the text
// has the whole error.
const MaxDetailsError = 1000

// ErrorResult is the result of an operation that failed: the text is the
// error, the details name it (cut to MaxDetailsError) and the servers that
// could not be searched, when it says so (see UnreachedError).
func ErrorResult(op Action, server string, err error) *Result {
	return &Result{Text: err.Error(), IsError: true, SpillName: "error",
		Details: Details{Operation: string(op), Server: server, IsError: true, Error: shorten(err.Error(), MaxDetailsError), Failed: failedOf(err)}}
}

// Summary returns the details without their listings and with the error
// cut to maxError characters, and whether that leaves anything out: what
// the details shrink to when they do not fit.
func (d Details) Summary(maxError int) (Details, bool) {
	sum := Details{Operation: d.Operation, Server: d.Server, IsError: d.IsError, Count: d.Count, Total: d.Total,
		Spills: d.Spills, Structured: d.Structured}
	sum.Error = shorten(d.Error, maxError)
	bulky := sum.Error != d.Error || d.Servers != nil || d.Tools != nil || d.Tool != nil ||
		d.Resources != nil || d.Templates != nil || d.Prompts != nil || d.Search != nil
	if d.Script != nil {
		// The script's identity stays; its logs are in the text.
		si := *d.Script
		si.Logs = nil
		if si.Error != nil {
			e := *si.Error
			e.Message = shorten(e.Message, maxError)
			si.Error = &e
		}
		sum.Script = &si
		bulky = bulky || d.Script.Logs != nil || si.Error != nil && si.Error.Message != d.Script.Error.Message
	}
	return sum, bulky
}

// Unbounded is the error result that replaces a result that could not be
// bounded (a spill file could not be written): it needs no spill file,
// its text a preview within half the limits.
func Unbounded(r *Result, err error, lim bound.Limits) *Result {
	text := fmt.Sprintf("the result of %s could not be bounded: %v", r.Details.Operation, err)
	d := Details{Operation: r.Details.Operation, Server: r.Details.Server, IsError: true}
	d.Error = shorten(text, min(MaxDetailsError, lim.MaxBytes/16))
	return &Result{Text: bound.Preview(text, lim.MaxBytes/2, lim.MaxLines/2), IsError: true, Details: d, SpillName: "error"}
}

// lines fills the result's text from lines; what names its spill files.
func (r *Result) lines(what string, lines []string) *Result {
	r.Text = strings.Join(lines, "\n")
	r.SpillName = what
	return r
}

// Status is the answer of a status request ({}): every server, after the
// configuration's errors, and before the project files that are ignored.
// cs is nil when there is nothing to say of the configuration.
func Status(servers []ServerStatus, cs *ConfigStatus, now time.Time) *Result {
	r := &Result{Details: Details{Operation: string(ActionStatus), Servers: servers, Count: len(servers), Config: cs}}
	var lines []string
	if cs != nil {
		lines = configLines(cs)
	}
	lines = append(lines, serverLines(servers, cs == nil, now)...)
	if cs != nil {
		lines = append(lines, ignoredLines(cs.Ignored)...)
	}
	return r.lines("status", lines)
}

// String is the problem as file:line:col: path: message.
func (p ConfigProblem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", p.Line, p.Col)
	}
	b.WriteString(": ")
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// configLines are the configuration's errors, as file:line:col: message.
func configLines(cs *ConfigStatus) []string {
	if len(cs.Errors) == 0 {
		return nil
	}
	head := "configuration errors:"
	if cs.Blocked {
		head = "configuration errors (no server is usable until they are fixed; hint: switchboard config validate):"
	}
	lines := []string{head}
	for _, p := range cs.Errors {
		lines = append(lines, "  "+p.String())
	}
	return lines
}

// serverLines are one line per server, after a count. hint adds how to
// configure a server when there is none and nothing else explains why.
func serverLines(sts []ServerStatus, hint bool, now time.Time) []string {
	if len(sts) == 0 {
		if hint {
			return []string{"no servers configured (hint: switchboard add NAME -- COMMAND ARGS…)"}
		}
		return []string{"no servers configured"}
	}
	connected := 0
	for _, st := range sts {
		if st.State == StateConnected {
			connected++
		}
	}
	lines := []string{fmt.Sprintf("%s (%d connected)", plural(len(sts), "server", "servers"), connected)}
	for _, st := range sts {
		lines = append(lines, serverLine(st, now))
	}
	return lines
}

func serverLine(st ServerStatus, now time.Time) string {
	line := st.Name + "  " + st.State
	if st.Tools >= 0 {
		line += "  " + plural(st.Tools, "tool", "tools")
	}
	if !st.IndexedAt.IsZero() {
		line += fmt.Sprintf("  indexed %s ago", age(now, st.IndexedAt))
	}
	switch {
	case st.State == StateBlocked:
		// The configuration's errors, above, say why.
	case st.ErrorClass == "config" && st.ErrorAt.IsZero():
		line += ": " + brief(st.Error, 300)
	case st.Error != "":
		line += fmt.Sprintf("  last error (%s, %s ago): %s", orDash(st.ErrorClass), age(now, st.ErrorAt), brief(st.Error, 300))
	}
	if st.Quarantined > 0 {
		line += fmt.Sprintf("  %d quarantined (changed; see describe, then switchboard approve)", st.Quarantined)
	}
	if st.Headline != "" {
		line += "  — " + st.Headline
	}
	for _, w := range st.Warnings {
		line += "\n  warning: " + w
	}
	return line
}

// ignoredLines name the ignored project files, why, and what to do.
func ignoredLines(ip *IgnoredProject) []string {
	if ip == nil {
		return nil
	}
	lines := []string{fmt.Sprintf("ignored project files (%s):", ip.Reason)}
	for _, f := range ip.Files {
		servers := "no servers"
		if len(f.Servers) > 0 {
			servers = "servers: " + strings.Join(f.Servers, ", ")
		}
		lines = append(lines, fmt.Sprintf("  %s (%s)", f.Path, servers))
	}
	return append(lines, "hint: "+ip.Hint)
}

func age(now, t time.Time) string {
	if t.IsZero() {
		return "?"
	}
	return now.Sub(t).Round(time.Second).String()
}

// Tools is the answer of a server request: the server's tools, by name,
// each with the first line of its description, and the head of its
// instructions.
func Tools(server string, tools []*mcp.Tool, instructions string) *Result {
	return ToolsWithPolicy(server, tools, instructions, Policy{})
}

// ToolsWithPolicy is Tools with what the server's policy says of its
// tools: those quarantined are marked, changed ones (listed with their
// approved definition) or held ones (listed by name alone), and the
// policy's warnings follow.
func ToolsWithPolicy(server string, tools []*mcp.Tool, instructions string, pol Policy) *Result {
	r := &Result{Details: Details{Operation: string(ActionServer), Server: server, Count: len(tools)}}
	lines := []string{fmt.Sprintf("%s on %q", plural(len(tools), "tool", "tools"), server)}
	sorted := append([]*mcp.Tool(nil), tools...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, t := range sorted {
		if mark, ok := pol.Held[t.Name]; ok {
			r.Details.Tools = append(r.Details.Tools, ToolInfo{Server: server, Name: t.Name, Changed: true, Held: true})
			lines = append(lines, mark+" "+t.Name)
			continue
		}
		info := ToolInfo{Server: server, Name: t.Name, Title: t.Title, Description: Headline(t.Description, 120), Changed: pol.Changed[t.Name]}
		r.Details.Tools = append(r.Details.Tools, info)
		line := toolLine(t.Name, info.Description)
		if info.Changed {
			line = ChangedMark + " " + line
		}
		lines = append(lines, line)
	}
	if h := Headline(instructions, 200); h != "" {
		lines = append(lines, "instructions: "+h)
	}
	for _, w := range pol.Warnings {
		lines = append(lines, "warning: "+w)
	}
	return r.lines("tools-"+server, lines)
}

func toolLine(name, desc string) string {
	if desc == "" {
		return name
	}
	return name + " — " + desc
}

// Describe is the answer of a describe request: one tool in full, with
// its schemas as TypeScript types when shapes is set. People read its
// schemas indented; agents get them compact, on one line.
func Describe(ref ToolRef, t *mcp.Tool, shapes bool, a Audience) *Result {
	r, _, lines := describe(ref, t, shapes, a)
	return r.lines("describe-"+ref.Name, lines)
}

// DescribeQuarantined is Describe of a quarantined tool: the definition
// the user approved (nil for none: a tool never approved is named alone),
// then what note says, and what the server offers instead as untrusted
// data, both in the text and in the details.
func DescribeQuarantined(ref ToolRef, approved *mcp.Tool, note QuarantineNote, shapes bool, a Audience) *Result {
	t := approved
	if t == nil {
		t = &mcp.Tool{Name: ref.Name}
	}
	r, d, lines := describe(ref, t, shapes && approved != nil, a)
	d.Changed, d.Held = true, approved == nil
	if approved == nil {
		lines = append(lines[:1], "definition: not shown until approved (what the server offers is below, as untrusted data)")
	}
	lines = append(lines, note.Notes...)
	if len(note.Offered) > 0 {
		d.Offered = bound.Untrusted(fmt.Sprintf("the definition of tool %q that %q offers, not approved", ref.Name, ref.Server), strings.Join(note.Offered, "\n"))
		lines = append(lines, d.Offered)
	}
	return r.lines("describe-"+ref.Name, lines)
}

// describe begins the answer of a describe request: the result, its
// tool's details, and the lines of its text so far.
func describe(ref ToolRef, t *mcp.Tool, shapes bool, a Audience) (*Result, *ToolDetail, []string) {
	d := &ToolDetail{Server: ref.Server, Name: ref.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Annotations: t.Annotations}
	r := &Result{Details: Details{Operation: string(ActionDescribe), Server: ref.Server, Count: 1, Tool: d}}
	lines := []string{fmt.Sprintf("tool %q on %q (call as %q)", ref.Name, ref.Server, ref.Prefixed())}
	if t.Title != "" {
		lines = append(lines, "title: "+t.Title)
	}
	if t.Description != "" {
		lines = append(lines, t.Description)
	}
	if a := d.AnnotationText(); a != "" {
		lines = append(lines, "annotations: "+a)
	}
	if shapes {
		d.InputShape = tsShape(t.InputSchema, MaxShape)
		sig := "(args: " + d.InputShape + ")"
		if t.OutputSchema != nil {
			d.OutputShape = tsShape(t.OutputSchema, MaxShape)
			sig += " => " + d.OutputShape
		}
		lines = append(lines, "typescript: "+sig)
	}
	if d.Unportable = Portable(t.InputSchema); len(d.Unportable) > 0 {
		lines = append(lines, "portability: hosts that map schemas onto Gemini function declarations or OpenAI strict mode may refuse this tool: "+strings.Join(d.Unportable, "; "))
	}
	lines = append(lines, "input schema:"+a.schemaJSON(t.InputSchema))
	if t.OutputSchema != nil {
		lines = append(lines, "output schema:"+a.schemaJSON(t.OutputSchema))
	}
	return r, d, lines
}

// AnnotationText is the tool's annotation hints as describe shows them:
// "read-only, destructive, idempotent, open-world", those that are set, or
// "" for none.
func (d *ToolDetail) AnnotationText() string {
	a := d.Annotations
	if a == nil {
		return ""
	}
	var parts []string
	if a.ReadOnlyHint {
		parts = append(parts, "read-only")
	}
	if a.DestructiveHint != nil && *a.DestructiveHint {
		parts = append(parts, "destructive")
	}
	if a.IdempotentHint {
		parts = append(parts, "idempotent")
	}
	if a.OpenWorldHint != nil && *a.OpenWorldHint {
		parts = append(parts, "open-world")
	}
	return strings.Join(parts, ", ")
}

// Call is the answer of a tool call: the server's result, whose content
// conv is (binary content already in spill files). A tool's error result
// is an error result carrying the server's text.
func Call(ref ToolRef, res *mcp.CallToolResult, conv bound.Converted) *Result {
	r := &Result{Text: conv.Text, Images: conv.Images, IsError: res.IsError, SpillName: "call-" + ref.Name, Content: conv.Blocks, Details: Details{
		Operation: string(ActionCall), Server: ref.Server, IsError: res.IsError, Count: len(res.Content),
		Spills: conv.Spills, Structured: res.StructuredContent,
	}}
	if res.IsError {
		r.Details.Error = Headline(conv.Text, 500)
		r.Text = fmt.Sprintf("tool %q on %q returned an error:\n%s", ref.Name, ref.Server, conv.Text)
	}
	if r.Text == "" {
		r.Text = fmt.Sprintf("tool %q on %q returned no content", ref.Name, ref.Server)
	}
	return r
}

// Instructions is the answer of an instructions request: the server's
// full instructions, labelled as untrusted data.
func Instructions(server, text string) *Result {
	r := &Result{Details: Details{Operation: string(ActionInstructions), Server: server, Count: 1}}
	if strings.TrimSpace(text) == "" {
		return r.lines("instructions", []string{fmt.Sprintf("%q gave no instructions", server)})
	}
	return r.lines("instructions", []string{fmt.Sprintf("instructions of %q:", server), bound.Untrusted(fmt.Sprintf("instructions of %q", server), text)})
}

// Reconnected is the answer of a reconnect request that succeeded.
func Reconnected(server string) *Result {
	r := &Result{Details: Details{Operation: string(ActionReconnect), Server: server, Count: 1}}
	return r.lines("reconnect", []string{fmt.Sprintf("reconnected %q", server)})
}

// failedOf returns the servers an error says could not be searched.
func failedOf(err error) []ServerError {
	var u *UnreachedError
	if errors.As(err, &u) {
		return u.Failed
	}
	return nil
}
