package main

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
)

func trustCommand() *command {
	return &command{
		name:    "trust",
		summary: "trust (or --revoke) the current project's server definitions",
		usage:   "[--revoke] [--json]",
		help: `A project's .mcp.json and .switchboard/config.json can start programs, so
they are ignored until you trust them. Trust is recorded in Switchboard's
user-global state directory and bound to the exact definitions: when they
change, the project is ignored again until you trust it again.

With --json, prints {"project", "trusted", "revoked", "files": [{"path",
"servers"}]}.`,
		run: runTrust,
	}
}

func runTrust(ctx context.Context, e *env, args []string) error {
	f := newFlags("trust", true)
	revoke := f.Bool("revoke", false, "forget the trust given to this project")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("trust takes no arguments: it trusts the project of the working directory")
	}
	d := e.dirs(f.config)
	out := trustJSON{Project: d.Project, Files: []trustFileJSON{}}
	if *revoke {
		if out.Revoked, err = config.Revoke(d); err != nil {
			return err
		}
		switch {
		case f.json:
			return writeJSON(e.stdout, out)
		case out.Revoked:
			fmt.Fprintf(e.stderr, "revoked trust in %s\n", e.pretty(d.Project))
		default:
			fmt.Fprintf(e.stderr, "%s was not trusted\n", e.pretty(d.Project))
		}
		return nil
	}
	c, err := config.Trust(d, time.Now())
	if err != nil {
		return err
	}
	out.Trusted = true
	for _, f := range c.Files {
		if f.InProject() && f.State != config.FileMissing {
			out.Files = append(out.Files, trustFileJSON{Path: f.Path, Servers: nonNil(f.Servers)})
		}
	}
	if f.json {
		return writeJSON(e.stdout, out)
	}
	fmt.Fprintf(e.stderr, "trusted %s:\n", e.pretty(d.Project))
	for _, f := range out.Files {
		fmt.Fprintf(e.stderr, "  %s: %s\n", e.pretty(f.Path), serverList(f.Servers))
	}
	return nil
}
