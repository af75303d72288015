package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/panel"
)

// env is the world a command sees; tests build their own.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	lookupEnv      func(string) (string, bool)
	cwd            string
	goos           string
	self           string        // the path of the running binary, which imports skip; "" when unknown
	offline        bool          // --offline: openEngine makes the configuration offline
	stopGrace      *atomic.Int64 // added to interruptGrace (a time.Duration): serve --http's drain; nil in tests
	states         *states       // settings.store's databases the command opened (openState)
	preconnect     string        // the server the command needs first: engineOptions starts it at once if it is a command
	preconnectTool string        // a tool the command calls without naming its server: the server its name names is preconnect's (serverOfTool)
}

// dirs describes where configuration lives, honouring --config.
func (e *env) dirs(explicit string) config.Dirs {
	d := config.FromEnv(e.getenv, e.cwd, e.goos)
	d.Self.Executable = e.self
	if explicit != "" {
		if !filepath.IsAbs(explicit) {
			explicit = filepath.Join(e.cwd, explicit)
		}
		d.Explicit = explicit
	}
	return d
}

// pretty shortens a path under the home directory to ~/… (~\… on Windows).
func (e *env) pretty(path string) string {
	home := config.HomeDir(e.goos, e.getenv)
	if home != "" && strings.HasPrefix(path, home+string(filepath.Separator)) {
		return "~" + path[len(home):]
	}
	return path
}

// flags is a flag set with the flags most commands share.
type flags struct {
	*flag.FlagSet
	json    bool
	config  string
	noLogin bool
	offline bool
}

func newFlags(name string, withJSON bool) *flags {
	f := &flags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError)}
	f.SetOutput(io.Discard)
	f.StringVar(&f.config, "config", "", "read this configuration `file` last, above all others")
	if withJSON {
		f.BoolVar(&f.json, "json", false, "print stable JSON instead of text")
	}
	return f
}

// addNoLogin adds --no-login and --offline, for commands that use servers.
func (f *flags) addNoLogin() {
	f.BoolVar(&f.noLogin, "no-login", false, "never start an OAuth login: fail with the command that logs in")
	f.BoolVar(&f.offline, "offline", false, "start no server that needs the network or may download what it runs; answer from the catalog (docs/policy.md)")
}

// parse parses flags anywhere among the arguments and returns the positional
// arguments. Arguments after "--" are returned apart, unparsed.
func (f *flags) parse(args []string) (pos, rest []string, err error) {
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, nil, &helpRequest{flags: f.FlagSet}
			}
			return nil, nil, usagef("%v", err)
		}
		if f.NArg() == 0 {
			return pos, rest, nil
		}
		pos = append(pos, f.Arg(0))
		args = f.Args()[1:]
	}
}

// flagHelp renders the flags of a set for a command's help text.
func flagHelp(f *flags) string {
	var b strings.Builder
	b.WriteString("Flags:\n")
	f.VisitAll(func(fl *flag.Flag) {
		name, usage := flag.UnquoteUsage(fl)
		line := "  --" + fl.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintf(&b, "%-24s %s\n", line, usage)
	})
	return strings.TrimRight(b.String(), "\n")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// isTerminal reports whether w is a terminal (a console on Windows), for
// progress and color: not merely a character device such as /dev/null or
// NUL.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isConsole(f)
}

// escapes reports whether w, a terminal, shows ANSI escape sequences
// rather than printing them; on a Windows console it first turns them on.
func escapes(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && enableEscapes(f)
}

// scopeFlags adds --project and --global.
type scopeFlags struct{ project, global bool }

func (s *scopeFlags) add(f *flags, what string) {
	f.BoolVar(&s.project, "project", false, what+" the project's .switchboard/config.json")
	f.BoolVar(&s.global, "global", false, what+" the user-global config.json (default)")
}

// scope returns the chosen scope, or def when neither flag is given.
func (s *scopeFlags) scope(def config.Scope) (config.Scope, error) {
	switch {
	case s.project && s.global:
		return "", usagef("--project and --global exclude each other")
	case s.project:
		return config.ScopeProject, nil
	case s.global:
		return config.ScopeGlobal, nil
	}
	return def, nil
}

// palette is the CLI's colours for output to w: on a terminal that takes
// escape sequences, unless NO_COLOR or TERM=dumb; plain text otherwise.
func (e *env) palette(w io.Writer) panel.Palette {
	on := isTerminal(w) && colorOK(e.getenv, escapes(w))
	return panel.NewPalette(on, on)
}

// colorColumn colours, in a table tabwriter aligned (header first), the
// word of each row that starts under the header's column named col, by
// style; the header is made bold. Colouring after alignment keeps the
// escape sequences out of the widths.
func colorColumn(table string, col string, pal panel.Palette, style func(string) string) string {
	if !pal.On() {
		return table
	}
	lines := strings.Split(table, "\n")
	at := strings.Index(lines[0], col)
	lines[0] = pal.Head(lines[0])
	for i := 1; at >= 0 && i < len(lines); i++ {
		l := lines[i]
		if len(l) <= at || (at > 0 && l[at-1] != ' ') {
			continue
		}
		end := strings.IndexByte(l[at:], ' ')
		if end < 0 {
			end = len(l) - at
		}
		lines[i] = l[:at] + style(l[at:at+end]) + l[at+end:]
	}
	return strings.Join(lines, "\n")
}
