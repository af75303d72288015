package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
)

func setCommand() *command {
	return &command{
		name:    "set",
		summary: "change a server's definition in place",
		usage:   "NAME [flags] [--dry-run] [--json] [-- COMMAND [ARGS…]]",
		help: `Changes fields of a server where it is defined: in Switchboard's own file
(the user-global one, or the project's). Only the fields named change;
comments, order and the other servers stay as they are. A server defined in
a shared file or another host's file is not changed there: define your own
with switchboard add NAME --force, which overrides it.

The result is validated as every write is; a value the configuration does
not accept (--lifecycle bogus, a credential written as a literal) is an
error naming the field, and nothing is written. --dry-run prints the change
as a diff and writes nothing.

Without flags, prints the server's definition (JSON; references stay
references) and says where it is defined; there is no interactive editor.

-- COMMAND [ARGS…] replaces the command and its arguments, and --url the
URL; either one switches the transport, dropping the other transport's
fields (env, cwd / headers, redirects). Lists (--include-tools,
--exclude-tools, --direct-tools, --approve) are comma-separated and replace
the list. --unset FIELD removes any field, so its default applies.

With --json, prints {"action": "changed", "server", "file", "scope",
"state", "source"}, as add does.

Examples:
  switchboard set github --env GITHUB_TOKEN --unset-env DEBUG
  switchboard set everything -- npx -y @modelcontextprotocol/server-everything@latest
  switchboard set api --lifecycle keep-alive --approve 'delete_*,write_*' --dry-run

` + flagHelp(setFlags(new(setOptions))),
		run: runSet,
	}
}

// setOptions are set's flags.
type setOptions struct {
	url, typ, cwd, lifecycle, toolPrefix        string
	include, exclude, direct, approve, pin      string
	idleTimeout, requestTimeout                 int
	env, unsetEnv, headers, unsetHeaders, unset stringList
	enable, disable, dryRun                     bool
}

func (o *setOptions) addFlags(f *flags) {
	f.StringVar(&o.url, "url", "", "the server's `URL` (an HTTP server)")
	f.StringVar(&o.typ, "type", "", "the transport: stdio, http or sse")
	f.StringVar(&o.cwd, "cwd", "", "the working `directory` of a stdio server")
	f.Var(&o.env, "env", "set an environment variable `K=V`; K alone means K=${K} (repeatable)")
	f.Var(&o.unsetEnv, "unset-env", "remove the environment variable `K` (repeatable)")
	f.Var(&o.headers, "header", "set an HTTP header `K=V` (or 'K: V') (repeatable)")
	f.Var(&o.unsetHeaders, "unset-header", "remove the HTTP header `K` (repeatable)")
	f.StringVar(&o.lifecycle, "lifecycle", "", "lazy, eager, keep-alive or lazy-keep-alive")
	f.IntVar(&o.idleTimeout, "idle-timeout", 0, "stop the server after this many idle `minutes` (0: never)")
	f.IntVar(&o.requestTimeout, "request-timeout-ms", 0, "fail a request after this many `milliseconds`")
	f.StringVar(&o.include, "include-tools", "", "offer only these `tools` (comma-separated globs)")
	f.StringVar(&o.exclude, "exclude-tools", "", "hide these `tools` (comma-separated globs)")
	f.StringVar(&o.direct, "direct-tools", "", "true, false or the `tools` to offer as direct tools (comma-separated)")
	f.StringVar(&o.toolPrefix, "tool-prefix", "", "how direct tools are named: server, short, none or mcp")
	f.StringVar(&o.approve, "approve", "", "never, always, destructive, or the `tools` that ask first (comma-separated globs)")
	f.StringVar(&o.pin, "pin", "", "true, false or strict")
	f.BoolVar(&o.enable, "enable", false, "enable the server (remove \"disabled\")")
	f.BoolVar(&o.disable, "disable", false, "disable the server (\"disabled\": true)")
	f.Var(&o.unset, "unset", "remove the `field` (e.g. lifecycle, includeTools), so its default applies (repeatable)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the change as a diff; write nothing")
}

// setFlags returns set's flag set, filling o.
func setFlags(o *setOptions) *flags {
	f := newFlags("set", true)
	o.addFlags(f)
	return f
}

func runSet(ctx context.Context, e *env, args []string) error {
	var o setOptions
	f := setFlags(&o)
	pos, cmdline, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("set needs exactly one server NAME before the flags or --")
	}
	name := pos[0]
	given := map[string]bool{}
	f.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	delete(given, "config")
	delete(given, "json")
	delete(given, "dry-run")
	d := e.dirs(f.config)
	sc, s, err := setScope(e, d, name)
	if err != nil {
		return err
	}
	if len(given) == 0 && cmdline == nil {
		return showDefinition(e, s, name, sc)
	}
	if o.dryRun && f.json {
		return usagef("--dry-run prints a diff: leave out --json")
	}
	edits, err := o.edits(given, cmdline, s)
	if err != nil {
		return err
	}
	ed, err := config.ChangeServer(d, sc, name, edits)
	if err != nil {
		return didYouMean(err, d, name)
	}
	if o.dryRun {
		if !ed.Changed() {
			fmt.Fprintf(e.stderr, "no change to %q in %s\n", name, e.pretty(ed.Path))
		}
		_, err := fmt.Fprint(e.stdout, ed.Diff())
		return err
	}
	if err := ed.Write(); err != nil {
		return err
	}
	if f.json {
		if err := writeJSON(e.stdout, change(d, "changed", name, ed.Path, sc)); err != nil {
			return err
		}
	} else if ed.Changed() {
		fmt.Fprintf(e.stderr, "changed %q in %s\n", name, e.pretty(ed.Path))
	} else {
		fmt.Fprintf(e.stderr, "no change to %q in %s\n", name, e.pretty(ed.Path))
	}
	if want := o.disable; o.enable || o.disable {
		if s, ok := config.Load(d).Server(name); ok && s.Disabled != want && s.DisabledBy != "" {
			return fmt.Errorf("%q is still disabled: %s disables it (hint: run switchboard enable %s)", name, e.pretty(s.DisabledBy), name)
		}
	}
	return nil
}

// setScope finds the file of ours that defines name: set changes a server
// where it is defined, and never a file that is not Switchboard's. s is
// nil for a server of a project that is not trusted yet.
func setScope(e *env, d config.Dirs, name string) (config.Scope, *config.Server, error) {
	c := config.Load(d)
	s, ok := c.Server(name)
	if !ok {
		for _, f := range c.Files {
			if f.Kind == config.KindProject && f.State == config.FileIgnored && slices.Contains(f.Servers, name) {
				return config.ScopeProject, nil, nil
			}
		}
		err := didYouMean(fmt.Errorf("%w %q", config.ErrUnknownServer, name), d, name)
		return "", nil, fmt.Errorf("%w\nhint: switchboard add %s defines a new server", err, name)
	}
	switch s.Source.Kind {
	case config.KindUser:
		return config.ScopeGlobal, s, nil
	case config.KindProject:
		return config.ScopeProject, s, nil
	case config.KindExplicit:
		return "", nil, fmt.Errorf("not changing %q: it is defined in %s, the file given with --config or SWITCHBOARD_CONFIG, which set does not write (hint: edit that file)", name, e.pretty(s.Source.Path))
	}
	where := "a shared file"
	switch s.Source.Kind {
	case config.KindImport:
		where = s.Source.Host + "'s file"
	case config.KindPlugin:
		where = "Agent Plugin " + s.Source.Plugin + "'s file"
	}
	return "", nil, fmt.Errorf("not changing %q: it is defined in %s (%s), which Switchboard does not write (hint: run switchboard add %s --force … to define it in Switchboard's own file, which overrides that definition; switchboard disable %s turns it off)", name, e.pretty(s.Source.Path), where, name, name)
}

// edits turns the flags given into changes of the definition, in a fixed
// order: the transport first, then the fields set, then those removed.
func (o *setOptions) edits(given map[string]bool, cmdline []string, s *config.Server) ([]config.FieldEdit, error) {
	if err := o.conflicts(given, cmdline); err != nil {
		return nil, err
	}
	var out, drop []config.FieldEdit
	set := func(field string, v any) { out = append(out, config.FieldEdit{Field: field, Value: v}) }
	remove := func(fields ...string) {
		for _, f := range fields {
			drop = append(drop, config.FieldEdit{Field: f, Remove: true})
		}
	}
	// Fields are removed after those set, so that the definition is never
	// empty and keeps its indentation.
	switch {
	case cmdline != nil:
		if s != nil && s.URL != "" {
			remove("url", "headers", "redirects")
			if !given["type"] {
				remove("type")
			}
		}
		set("command", cmdline[0])
		if len(cmdline) > 1 {
			set("args", cmdline[1:])
		} else {
			remove("args")
		}
	case given["url"]:
		if s != nil && s.Command != "" {
			remove("command", "args", "cwd", "env")
			if !given["type"] {
				remove("type")
			}
		}
		set("url", o.url)
	}
	for _, fl := range []struct {
		flag, field string
		value       any
	}{
		{"type", "type", o.typ},
		{"cwd", "cwd", o.cwd},
		{"lifecycle", "lifecycle", o.lifecycle},
		{"idle-timeout", "idleTimeout", o.idleTimeout},
		{"request-timeout-ms", "requestTimeoutMs", o.requestTimeout},
		{"include-tools", "includeTools", list(o.include)},
		{"exclude-tools", "excludeTools", list(o.exclude)},
		{"direct-tools", "directTools", boolOrList(o.direct, nil)},
		{"tool-prefix", "toolPrefix", o.toolPrefix},
		{"approve", "approve", boolOrList(o.approve, []string{"never", "always", "destructive"})},
		{"pin", "pin", pinValue(o.pin)},
	} {
		if given[fl.flag] {
			set(fl.field, fl.value)
		}
	}
	if err := o.pairs(&out); err != nil {
		return nil, err
	}
	switch {
	case o.enable:
		remove("disabled")
	case o.disable:
		set("disabled", true)
	}
	remove(o.unset...)
	return append(out, drop...), nil
}

// pairs adds the env and header edits.
func (o *setOptions) pairs(out *[]config.FieldEdit) error {
	for _, p := range []struct {
		field      string
		set, unset []string
		seps       string
		bare       bool
	}{
		{"env", o.env, o.unsetEnv, "=", true},
		{"headers", o.headers, o.unsetHeaders, "=:", false},
	} {
		m, err := pairs(p.set, p.seps, p.bare)
		if err != nil {
			return err
		}
		for _, k := range sortedNames(m) {
			*out = append(*out, config.FieldEdit{Field: p.field, Key: k, Value: m[k]})
		}
		for _, k := range p.unset {
			if _, ok := m[k]; ok {
				return usagef("%s %q is both set and unset", p.field, k)
			}
			*out = append(*out, config.FieldEdit{Field: p.field, Key: k, Remove: true})
		}
	}
	return nil
}

// conflicts refuses flags that contradict each other.
func (o *setOptions) conflicts(given map[string]bool, cmdline []string) error {
	switch {
	case o.enable && o.disable:
		return usagef("give --enable or --disable, not both")
	case cmdline != nil && len(cmdline) == 0:
		return usagef("give a command after --")
	case cmdline != nil && given["url"]:
		return usagef("give either --url or a command after --, not both")
	}
	flagOf := map[string]string{"type": "type", "cwd": "cwd", "lifecycle": "lifecycle", "idleTimeout": "idle-timeout",
		"requestTimeoutMs": "request-timeout-ms", "includeTools": "include-tools", "excludeTools": "exclude-tools",
		"directTools": "direct-tools", "toolPrefix": "tool-prefix", "approve": "approve", "pin": "pin", "url": "url",
		"disabled": "enable", "env": "env", "headers": "header"}
	fields := config.ServerFields()
	for _, u := range o.unset {
		if !slices.Contains(fields, u) {
			return usagef("--unset %q: not a server field (fields: %s)", u, strings.Join(fields, ", "))
		}
		if fl := flagOf[u]; given[fl] || u == "disabled" && o.disable || (u == "command" || u == "args") && cmdline != nil {
			return usagef("--unset %s conflicts with the flag that sets it", u)
		}
	}
	return nil
}

// list splits a comma-separated list; "" is the empty list.
func list(s string) []string {
	out := []string{}
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// boolOrList is true or false, one of words as written, or a list.
func boolOrList(s string, words []string) any {
	switch {
	case s == "true" || s == "false":
		return s == "true"
	case slices.Contains(words, s):
		return s
	}
	return list(s)
}

// pinValue is true or false, or the word as written ("strict"; anything
// else is named by validation).
func pinValue(s string) any {
	if s == "true" || s == "false" {
		return s == "true"
	}
	return s
}

// definitionView is what set prints without flags: the definition as it
// would be written, with the policy fields.
type definitionView struct {
	config.Definition
	Approve any    `json:"approve,omitempty"`
	Pin     string `json:"pin,omitempty"`
}

func showDefinition(e *env, s *config.Server, name string, sc config.Scope) error {
	if s == nil {
		return fmt.Errorf("%q is defined in the project, which is not trusted (hint: run switchboard trust to see it, or give flags to change it)", name)
	}
	v := definitionView{Definition: s.Definition(), Pin: string(s.Pin)}
	if a := s.Approve; a != nil {
		v.Approve = string(a.Mode)
		if a.Mode == config.ApproveTools {
			v.Approve = a.Tools
		}
	}
	if err := writeJSON(e.stdout, map[string]definitionView{name: v}); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "%q is defined in %s (%s); change it with flags, e.g. switchboard set %s --env K=V --lifecycle eager (see switchboard set --help)\n", name, e.pretty(s.Source.Path), sc, name)
	return nil
}
