package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/config/hosts"
	"github.com/switchboard-mcp/switchboard/internal/samefile"
)

// setupCommandEnv overrides the command written into a host's file.
const setupCommandEnv = "SWITCHBOARD_SETUP_COMMAND"

// setupCommand mounts Switchboard in an agent host. With --write it is the
// only command that changes a file of another program (hosts.Setup.Write).
func setupCommand() *command {
	return &command{
		name:    "setup",
		summary: "print (or --write) the snippet that mounts Switchboard in an agent host",
		usage:   "HOST [--write [--force]] [--migrate] [--http URL | --command PATH] [--name NAME] [--json] | HOST --undo",
		help: `Prints the file of HOST's own user-scope MCP configuration and the entry
that mounts Switchboard there: the host starts "switchboard serve" (the
absolute path of this executable), or, with --http, connects to a running
"switchboard serve --http" at URL. Where the host has a command of its own
that adds the entry (claude, codex, gemini, code, opencode), it is shown as
an alternative.

With --write, after printing it, setup adds the entry to that file: a
missing file is created; an existing one is first copied to
FILE.switchboard-backup-<UTC time>, then only the one entry changes and
every other byte (comments, order, indentation, the host's own state) is
kept. A file that does not parse, or that defines NAME otherwise, is not
changed (--force replaces that definition). A file already set up is not
written again.

The command written must outlive this one: a program that "go run" built
lives in the Go build cache or in a go-build directory that is deleted when
go run exits, so --write refuses it (and printing warns). Install
switchboard and run setup from there, or give --command PATH; --force
writes it anyway. A program merely in the temporary directory is fine.

With --migrate, setup also turns off, in that file, the servers Switchboard
now serves (the same name, and the same command and arguments or URL, in
Switchboard's own configuration), so that the host does not start them a
second time beside Switchboard: Codex gets enabled = false, opencode
"enabled": false (or "disabled": true in its V2 shape); the other hosts keep
no such field in the file, so the entry is removed (the backup keeps it).
Without --write it prints the change as a diff; with --write it mounts
Switchboard first if needed, then makes the change after a backup: one
backup and one --undo for both writes. Running it again changes nothing.

--undo reverses the last write setup made to HOST's file (--write or
--migrate --write): it puts the backup back byte for byte, or removes a file
setup created, and refuses if the file changed since setup wrote it.

This is the only command that writes a file of another program, and only
with --write or --undo.

Hosts: ` + strings.Join(config.HostNames(), ", ") + `

Environment:
  ` + setupCommandEnv + `   the command to write instead of this executable's
                              path (for tests and packagers)

` + flagHelp(setupFlags(new(setupOptions))),
		run: runSetup,
	}
}

type setupOptions struct {
	json, write, force, migrate, undo bool
	url, name, command                string
}

func setupFlags(o *setupOptions) *flags {
	f := &flags{FlagSet: flag.NewFlagSet("setup", flag.ContinueOnError)}
	f.SetOutput(io.Discard)
	f.BoolVar(&o.write, "write", false, "add the entry to the host's file, after a backup")
	f.BoolVar(&o.force, "force", false, "with --write, replace a different definition of NAME, or write a temporary build of go run")
	f.StringVar(&o.url, "http", "", "mount Switchboard's Streamable HTTP endpoint at `URL` instead of starting it")
	f.StringVar(&o.command, "command", "", "the `PATH` of the switchboard the host starts (default: this executable)")
	f.StringVar(&o.name, "name", "", "the server `NAME` in the host (default switchboard)")
	f.BoolVar(&o.migrate, "migrate", false, "also turn off, in the host's file, the servers Switchboard serves")
	f.BoolVar(&o.undo, "undo", false, "reverse the last write setup made to the host's file")
	f.BoolVar(&o.json, "json", false, "print stable JSON instead of text")
	return f
}

type setupJSON struct {
	Host    string `json:"host"`
	File    string `json:"file"`
	Name    string `json:"name"`
	Snippet string `json:"snippet"`
	Exists  bool   `json:"exists"`
	Written bool   `json:"written"`
	Backup  string `json:"backup"`
	State   string `json:"state"`           // no-file, absent, same, different or invalid
	Error   string `json:"error,omitempty"` // why the file cannot be changed, for invalid
	// Migrate is what --migrate turns off.
	Migrate *migrateJSON `json:"migrate,omitempty"`
}

func runSetup(ctx context.Context, e *env, args []string) error {
	host, o, err := parseSetup(args)
	if err != nil {
		return err
	}
	if o.undo {
		return runSetupUndo(e, host, o)
	}
	opts := hosts.SetupOptions{Name: o.name, URL: o.url, Journal: setupJournal(e.dirs(""))}
	if o.url == "" {
		if opts.Command, err = setupExecutable(e, o); err != nil {
			return err
		}
	}
	s, err := hosts.PlanSetup(e.dirs("").Hosts(), host, opts)
	if err != nil {
		return err
	}
	out := setupJSON{Host: s.Host, File: s.File, Name: s.Name, Snippet: s.Snippet, Exists: s.Exists(), State: string(s.State)}
	if s.Err != nil {
		out.Error = s.Err.Error()
	}
	if !o.json {
		printSetup(e, s)
	}
	if o.write {
		out.Written, out.Backup, err = s.Write(o.force, time.Now())
		if !o.json {
			reportSetup(e, s, out.Written, out.Backup)
		}
		if err != nil {
			return err
		}
	} else if !o.json && !o.migrate {
		setupHints(e, s, args)
	}
	if o.migrate {
		if out.Migrate, err = runMigrate(e, host, o, args, out.Written); err != nil {
			return err
		}
	}
	if o.json {
		return writeJSON(e.stdout, out)
	}
	return nil
}

func parseSetup(args []string) (host string, o setupOptions, err error) {
	pos, _, err := setupFlags(&o).parse(args)
	switch {
	case err != nil:
		return "", o, err
	case len(pos) != 1:
		return "", o, usagef("setup needs one HOST: %s", strings.Join(config.HostNames(), ", "))
	case !contains(config.HostNames(), pos[0]):
		return "", o, usagef("unknown host %q: use one of %s", pos[0], strings.Join(config.HostNames(), ", "))
	case o.undo && (o.write || o.force || o.migrate || o.url != "" || o.command != "" || o.name != ""):
		return "", o, usagef("--undo takes no other flag but --json: it reverses the last write setup made to %s's file", pos[0])
	case o.force && !o.write:
		return "", o, usagef("--force only applies with --write")
	case o.command != "" && o.url != "":
		return "", o, usagef("--command and --http exclude each other: with --http the host starts nothing")
	}
	return pos[0], o, nil
}

// printSetup prints the file, whether it mounts Switchboard already, and
// the snippet.
func printSetup(e *env, s *hosts.Setup) {
	var status string
	switch s.State {
	case hosts.SetupNoFile:
		status = "not set up (the file does not exist yet)"
	case hosts.SetupAbsent:
		status = fmt.Sprintf("not set up (%q is not in the file)", s.Name)
	case hosts.SetupSame:
		status = "already set up"
	case hosts.SetupDifferent:
		status = fmt.Sprintf("%q is in the file with another definition", s.Name)
	case hosts.SetupInvalid:
		status = fmt.Sprintf("the file cannot be changed: %v", s.Err)
	}
	fmt.Fprintf(e.stdout, "file:   %s\nstatus: %s\n\n%s", e.pretty(s.File), status, s.Snippet)
	if s.Host == "claude-desktop" && e.goos != "darwin" && e.goos != "windows" {
		fmt.Fprintln(e.stderr, "note: Claude Desktop ships for macOS and Windows; this is the file unofficial Linux builds read")
	}
}

// setupHints says, on stderr, what to run next.
func setupHints(e *env, s *hosts.Setup, args []string) {
	switch s.State {
	case hosts.SetupSame:
		return
	case hosts.SetupDifferent:
		fmt.Fprintf(e.stderr, "hint: switchboard setup %s --write --force replaces it (after a backup of the file)\n", shellJoin(e.goos, args))
	case hosts.SetupInvalid:
		fmt.Fprintln(e.stderr, "hint: fix the file, or add the snippet by hand")
	case hosts.SetupNoFile:
		fmt.Fprintf(e.stderr, "hint: switchboard setup %s --write creates the file with it\n", shellJoin(e.goos, args))
	default:
		fmt.Fprintf(e.stderr, "hint: switchboard setup %s --write adds it (after a backup of the file)\n", shellJoin(e.goos, args))
	}
	if s.HostCommand != nil && s.State != hosts.SetupInvalid {
		fmt.Fprintf(e.stderr, "hint: or let %s add it: %s\n", s.Title, shellJoin(e.goos, s.HostCommand))
	}
}

// reportSetup says, on stderr, what a write did.
func reportSetup(e *env, s *hosts.Setup, written bool, backup string) {
	if backup != "" {
		fmt.Fprintf(e.stderr, "backed up %s to %s\n", e.pretty(s.File), e.pretty(backup))
	}
	switch {
	case written:
		fmt.Fprintf(e.stderr, "wrote %s: restart %s (or reload its MCP servers) to use %q\n", e.pretty(s.File), s.Title, s.Name)
	case s.State == hosts.SetupSame:
		fmt.Fprintf(e.stderr, "already set up: %s mounts %q as shown; nothing written\n", e.pretty(s.File), s.Name)
	}
}

// setupExecutable returns the command a host should start: --command,
// else $SWITCHBOARD_SETUP_COMMAND, else the absolute path of this
// executable. A link on PATH that leads to it is preferred to the file it
// points to: a package manager's link (/opt/homebrew/bin/switchboard)
// outlives upgrades, the versioned file does not. A temporary build of go
// run is refused for --write without --force.
func setupExecutable(e *env, o setupOptions) (string, error) {
	if o.command != "" {
		c := o.command
		if strings.ContainsAny(c, "/"+string(filepath.Separator)) && !filepath.IsAbs(c) {
			c = filepath.Join(e.cwd, c)
		}
		return withExe(e.goos, c, fileExists), nil
	}
	if c := e.getenv(setupCommandEnv); c != "" {
		return c, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding this executable: %w (hint: set %s to its absolute path)", err, setupCommandEnv)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	if p, err := exec.LookPath("switchboard"); err == nil {
		if abs, err := filepath.Abs(p); err == nil && samefile.Is(abs, exe) {
			exe = abs
		}
	}
	why := goRunBuild(exe, e.getenv, e.goos)
	switch {
	case why == "":
	case o.write && !o.force:
		return "", fmt.Errorf("refusing to write %s into the host's file: %s, so the host could not start it (hint: go install ./cmd/switchboard and run setup from the installed program, or give --command PATH, or --force to write it anyway)", exe, why)
	default:
		fmt.Fprintf(e.stderr, "warning: %s: %s (hint: install switchboard and run setup from there, or give --command PATH)\n", exe, why)
	}
	return exe, nil
}

// goRunBuild says why exe is a program that go run built and will not
// keep, or "" when it is not. go run builds into a directory go-build<N>
// under $GOTMPDIR or the temporary directory (…/go-build123/b001/exe/NAME),
// removed when it exits; since Go 1.24 it also keeps the program in the
// build cache (GOCACHE/ab/<64 hex digits>-d/NAME), replaced by the next
// build and trimmed when unused. Both are recognised by their shape, so
// GOCACHE set with go env -w is recognised too; the cache is also
// recognised by its location ($GOCACHE, else go-build in the user's cache
// directory). Merely living under the temporary directory does not count:
// programs are installed there on purpose (CI runners, test harnesses).
func goRunBuild(exe string, getenv func(string) string, goos string) string {
	const tmpBuild = "it is a temporary build of go run, deleted when go run exits"
	const cached = "it is in the Go build cache, where go run keeps what it builds until the next build or the cache is trimmed"
	parts := strings.Split(filepath.ToSlash(filepath.Dir(exe)), "/")
	for _, p := range parts {
		if rest, ok := strings.CutPrefix(p, "go-build"); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return tmpBuild
		}
	}
	if n := len(parts); n >= 2 && isHex(parts[n-2], 2) && strings.HasSuffix(parts[n-1], "-d") && isHex(strings.TrimSuffix(parts[n-1], "-d"), 64) {
		return cached
	}
	if c := goCache(getenv, goos); c != "" && strings.HasPrefix(exe, c+string(filepath.Separator)) {
		return cached
	}
	return ""
}

// goCache is the Go build cache's directory as the go command finds it
// without its own settings file: $GOCACHE, else go-build in the user's
// cache directory; "" when there is none.
func goCache(getenv func(string) string, goos string) string {
	if c := getenv("GOCACHE"); c != "" {
		if c == "off" || !filepath.IsAbs(c) {
			return ""
		}
		return filepath.Clean(c)
	}
	var dir string
	switch {
	case goos == "darwin" && getenv("HOME") != "":
		dir = filepath.Join(getenv("HOME"), "Library", "Caches")
	case goos == "windows":
		dir = getenv("LocalAppData")
	case getenv("XDG_CACHE_HOME") != "" && filepath.IsAbs(getenv("XDG_CACHE_HOME")):
		dir = getenv("XDG_CACHE_HOME")
	case getenv("HOME") != "":
		dir = filepath.Join(getenv("HOME"), ".cache")
	}
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, "go-build")
}

func isHex(s string, n int) bool {
	return len(s) == n && strings.Trim(s, "0123456789abcdef") == ""
}
