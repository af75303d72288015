// Command switchboard is one MCP endpoint in front of all of a user's MCP
// servers: a CLI for people, an MCP server for agents, and the reference
// user of the switchboard library.
//
// Output rules, for every command:
//   - stdout carries the requested output only; diagnostics, hints and
//     progress go to stderr.
//   - --json gives stable machine output for every listing; its fields are
//     only ever added to, never renamed.
//   - --help prints to stdout and exits 0.
//   - Exit codes: 0 success, 1 failure, 2 usage error, 130 interrupted.
//   - No secret value is ever printed: references such as ${TOKEN} are
//     shown as written, never resolved, and a literal that looks like a
//     credential is shown as [redacted].
//   - SIGINT and SIGTERM end every command, and so does SIGHUP (the terminal
//     closed) unless it was ignored at start (nohup): after interruptGrace,
//     or at a second signal, even one stuck in work that ignores its
//     context. On Windows, Ctrl-C and Ctrl-Break arrive as os.Interrupt,
//     and closing the console, logging off or shutting down as SIGTERM
//     (stopSignals).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/switchboard-mcp/switchboard/proxy"
)

func main() {
	// A stdio server's supervisor (Options.Supervise) is a copy of
	// switchboard too: it runs from the initialisation of a package the
	// library imports, and never reaches main.
	cwd, _ := os.Getwd()
	self, _ := os.Executable()
	e := &env{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		getenv: os.Getenv, lookupEnv: os.LookupEnv, cwd: cwd, goos: runtime.GOOS, self: self,
		stopGrace: new(atomic.Int64),
	}
	if quick(os.Args[1:]) {
		// Nothing to stop cleanly: a signal's default action ends it, and
		// the command does not pay for the signal handlers' threads.
		os.Exit(run(context.Background(), e, os.Args[1:]))
	}
	sigs := stopSignals(signal.Ignored)
	ctx, stop := signal.NotifyContext(context.Background(), sigs...)
	defer stop()
	grace := func() time.Duration { return interruptGrace + time.Duration(e.stopGrace.Load()) }
	code := interruptible(ctx, stop, sigs, os.Stderr, grace, func() int { return run(ctx, e, os.Args[1:]) })
	stop()
	os.Exit(code)
}

// quick reports whether the command line runs a quick command (or help,
// or no command at all).
func quick(args []string) bool {
	if len(args) == 0 {
		return true
	}
	switch args[0] {
	case "-h", "--help", "help", "--version", "-version":
		return true
	}
	c := findCommand(args[0])
	return c == nil || c.quick
}

// interruptGrace is how long a command has, after SIGINT or SIGTERM, to
// stop cleanly: close its servers, remove its spill files. Closing servers
// is bounded by the upstream close timeout (5s, then their processes are
// killed), so a command that heeds its context is done well within it; one
// stuck on something that does not (a read of a pipe nobody writes to)
// still ends.
const interruptGrace = 10 * time.Second

// interruptible runs f, the command, and returns its exit code. Once ctx
// ends, that is at one of sigs, f has grace to return; past that, or at a
// second signal, the process stops waiting for it and exits 130, whatever
// the command was doing. stop undoes the signal handling of ctx; the
// second signal is caught here instead, so that it too exits 130 with a
// word on stderr. The goroutine running f is left behind only then, as the
// process exits.
func interruptible(ctx context.Context, stop func(), sigs []os.Signal, stderr io.Writer, graceOf func() time.Duration, f func() int) int {
	done := make(chan int, 1)
	go func() { done <- f() }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
	}
	again := make(chan os.Signal, 1)
	if len(sigs) > 0 { // Notify with none would relay every signal, SIGCHLD and SIGURG among them
		signal.Notify(again, sigs...)
		defer signal.Stop(again)
	}
	stop()
	grace := graceOf()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case code := <-done:
		return code
	case <-again:
		fmt.Fprintln(stderr, "switchboard: interrupted again: exiting without waiting for the command to stop")
	case <-t.C:
		fmt.Fprintf(stderr, "switchboard: interrupted: the command did not stop within %v of the signal, so it is abandoned\n", grace)
	}
	return exitInterrupted
}

// Exit codes.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	usage   string // the synopsis after "switchboard NAME"
	help    string // the long description
	hidden  bool
	// quick commands start no process, keep nothing open that must be
	// closed, and write nothing a signal could leave half-done (status,
	// config, version, completion): they run without signal handlers,
	// whose set-up is a tenth of such a command's start, and a signal's
	// default action ends them at once.
	quick bool
	run   func(ctx context.Context, e *env, args []string) error
}

func commands() []*command {
	return []*command{
		statusCommand(),
		serverVerb("tools"),
		searchCommand(),
		describeCommand(),
		callCommand(),
		runCommand(),
		approveCommand(),
		approvalsCommand(),
		auditCommand(),
		indexCommand(),
		serverVerb("resources"),
		readCommand(),
		serverVerb("prompts"),
		promptCommand(),
		serverVerb("instructions"),
		serverVerb("reconnect"),
		authCommand(),
		panelCommand(),
		serveCommand(),
		logsCommand(),
		doctorCommand(),
		configCommand(),
		addCommand(),
		registryCommand(),
		updateCommand(),
		removeCommand(),
		setCommand(),
		enableCommand(),
		disableCommand(),
		setEmbedCommand(),
		trustCommand(),
		importCommand(),
		secretCommand(),
		setupCommand(),
		completionCommand(),
		completeCommand(),
		versionCommand(),
	}
}

// commandNames lists the commands help shows.
func commandNames() []string {
	var names []string
	for _, c := range commands() {
		if !c.hidden {
			names = append(names, c.name)
		}
	}
	return names
}

func findCommand(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run executes one command line and returns the exit code.
func run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		printUsage(e.stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "--help", "help":
		if len(rest) > 0 {
			c := findCommand(rest[0])
			if c == nil {
				return unknownCommand(e, rest[0])
			}
			printCommandHelp(e.stdout, c)
			return exitOK
		}
		printUsage(e.stdout)
		return exitOK
	case "--version", "-version":
		name = "version"
	}
	c := findCommand(name)
	if c == nil {
		return unknownCommand(e, name)
	}
	err := c.run(ctx, e, rest)
	if cerr := e.closeStates(); cerr != nil { // after the command's engines
		err = errors.Join(err, cerr)
	}
	return e.exit(c, err)
}

// unknownCommand reports a command name that names no command, with the
// closest names there are, and returns the usage exit code: for
// "switchboard NAME" and "switchboard help NAME" alike.
func unknownCommand(e *env, name string) int {
	fmt.Fprintf(e.stderr, "switchboard: unknown command %q\n", name)
	if near := proxy.Closest(name, commandNames(), 3); len(near) > 0 {
		fmt.Fprintf(e.stderr, "did you mean: %s\n", strings.Join(near, ", "))
	}
	fmt.Fprintln(e.stderr, "hint: run switchboard help to list the commands")
	return exitUsage
}

// exit maps an error to an exit code and prints it: the one place that does.
func (e *env) exit(c *command, err error) int {
	var u *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		printCommandHelp(e.stdout, c)
		return exitOK
	case errors.As(err, &u):
		fmt.Fprintf(e.stderr, "%s %s\n", e.palette(e.stderr).Bad("switchboard "+c.name+":"), u.msg)
		fmt.Fprintf(e.stderr, "usage: switchboard %s %s\n", c.name, c.usage)
		return exitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(e.stderr, "switchboard: interrupted")
		return exitInterrupted
	case errors.Is(err, errSilent):
		return exitFailure
	default:
		fmt.Fprintf(e.stderr, "%s %v\n", e.palette(e.stderr).Bad("switchboard "+c.name+":"), err)
		return exitFailure
	}
}

// errHelp asks for the command's help on stdout.
var errHelp = errors.New("help requested")

// helpRequest is errHelp from a command's flag parsing, carrying the flags
// so that completion can list them without running the command.
type helpRequest struct{ flags *flag.FlagSet }

func (h *helpRequest) Error() string        { return errHelp.Error() }
func (h *helpRequest) Is(target error) bool { return target == errHelp }

// errSilent is a failure whose explanation was already printed.
var errSilent = errors.New("failed")

// usageError is a command line that cannot be run as written.
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `switchboard puts all of your MCP servers behind one endpoint.

Usage:
  switchboard COMMAND [flags] [args]

Commands:
`)
	for _, c := range commands() {
		if !c.hidden {
			fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprint(w, `
Global environment:
  SWITCHBOARD_CONFIG   an explicit configuration file, read last (highest precedence)

Exit codes: 0 success, 1 failure, 2 usage error, 130 interrupted.
Run switchboard help COMMAND for the flags of a command.
`)
}

func printCommandHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: switchboard %s %s\n\n%s\n", c.name, c.usage, c.help)
	fmt.Fprint(w, "\nExit codes: 0 success, 1 failure, 2 usage error, 130 interrupted.\n")
}
