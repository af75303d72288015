package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/proxy"
)

func removeCommand() *command {
	return &command{
		name:    "remove",
		summary: "remove a server from your own configuration",
		usage:   "NAME [--project|--global] [--json]",
		help: `Removes a server's definition from Switchboard's own file that holds it
(or the one chosen with --project or --global). A server defined in a shared
file or another host's file is never removed from there: disable it instead.

With --json, prints {"action", "server", "file", "scope", "state",
"source"}: the state is "absent" unless another file still defines it.`,
		run: runRemove,
	}
}

func runRemove(ctx context.Context, e *env, args []string) error {
	f := newFlags("remove", true)
	var scope scopeFlags
	scope.add(f, "remove from")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("remove needs exactly one server NAME")
	}
	d := e.dirs(f.config)
	sc, err := ownScope(d, &scope, pos[0])
	if err != nil {
		return err
	}
	path, err := config.RemoveServer(d, sc, pos[0])
	if err != nil {
		if s, ok := config.Load(d).Server(pos[0]); ok && !s.Source.Ours() {
			return fmt.Errorf("%w\nhint: %q is defined in %s, which Switchboard does not write; run switchboard disable %s", err, pos[0], e.pretty(s.Source.Path), pos[0])
		}
		return didYouMean(err, d, pos[0])
	}
	if f.json {
		return writeJSON(e.stdout, change(d, "removed", pos[0], path, sc))
	}
	fmt.Fprintf(e.stderr, "removed %q from %s\n", pos[0], e.pretty(path))
	return nil
}

// didYouMean adds the configured servers nearest to name to err when no
// server is called name.
func didYouMean(err error, d config.Dirs, name string) error {
	c := config.Load(d)
	if _, ok := c.Server(name); ok {
		return err
	}
	if near := proxy.Closest(name, serverNames(c, "remove"), 3); len(near) > 0 {
		return fmt.Errorf("%w; did you mean: %s", err, strings.Join(near, ", "))
	}
	return err
}

// ownScope picks the file of ours to change: the flag's, else the one of ours
// that defines the server (the project's first, as it is higher), else the
// user-global one.
func ownScope(d config.Dirs, s *scopeFlags, name string) (config.Scope, error) {
	if s.project || s.global {
		return s.scope(config.ScopeGlobal)
	}
	c := config.Load(d)
	for _, f := range c.Files {
		if f.Kind != config.KindProject || f.State == config.FileMissing {
			continue
		}
		for _, n := range f.Servers {
			if n == name {
				return config.ScopeProject, nil
			}
		}
	}
	return config.ScopeGlobal, nil
}
