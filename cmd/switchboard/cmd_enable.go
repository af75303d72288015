package main

import (
	"context"
	"fmt"

	"github.com/switchboard-mcp/switchboard/config"
)

func enableCommand() *command {
	return &command{
		name:    "enable",
		summary: "enable a disabled server",
		usage:   "NAME [--project|--global] [--json]",
		help: `Enables a server by changing Switchboard's own file: it removes a
{"disabled": true} there, or copies a definition disabled in a shared file
into the user-global file without "disabled". Shared files are never changed.

With --json, prints {"action", "server", "file", "scope", "state",
"source"}: the file written and the server's state afterwards.`,
		run: func(ctx context.Context, e *env, args []string) error {
			return runSetDisabled(e, "enable", args, false)
		},
	}
}

func disableCommand() *command {
	return &command{
		name:    "disable",
		summary: "disable a server without removing its definition",
		usage:   "NAME [--project|--global] [--json]",
		help: `Disables a server by writing "disabled": true into Switchboard's own file.
A server defined in a shared file is disabled by adding {"disabled": true}
under its name in the user-global file, which overrides the lower definition.

With --json, prints {"action", "server", "file", "scope", "state",
"source"}: the file written and the server's state afterwards.`,
		run: func(ctx context.Context, e *env, args []string) error {
			return runSetDisabled(e, "disable", args, true)
		},
	}
}

func runSetDisabled(e *env, name string, args []string, disabled bool) error {
	f := newFlags(name, true)
	var scope scopeFlags
	scope.add(f, "change")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("%s needs exactly one server NAME", name)
	}
	d := e.dirs(f.config)
	sc, err := ownScope(d, &scope, pos[0])
	if err != nil {
		return err
	}
	path, err := config.SetDisabled(d, sc, pos[0], disabled)
	if err != nil {
		return didYouMean(err, d, pos[0])
	}
	if f.json {
		if err := writeJSON(e.stdout, change(d, name+"d", pos[0], path, sc)); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stderr, "%sd %q in %s\n", name, pos[0], e.pretty(path))
	}
	if s, ok := config.Load(d).Server(pos[0]); ok && s.Disabled != disabled {
		return fmt.Errorf("%q is still %s: %s overrides %s (hint: use --project or --global to change that file)", pos[0], map[bool]string{true: "disabled", false: "enabled"}[s.Disabled], e.pretty(s.Source.Path), e.pretty(path))
	}
	return nil
}
