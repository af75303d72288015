package main

import (
	"context"
	"errors"
	"strings"

	"github.com/switchboard-mcp/switchboard/proxy"
)

func readCommand() *command {
	return &command{
		name: "read", summary: "read a server's resource", usage: "SERVER REF|URI [--json]",
		help: `Reads one resource. REF is a reference that switchboard resources printed
(r1, r2, …): the command lists the server's resources first, so the numbers
are those of a fresh listing. A URI made from one of the server's templates
is read as it is. The text is labelled as untrusted data; binary content is
saved to a file.

With --json, prints the result's structured details (documented in docs/cli.md).`,
		run: runRead,
	}
}

func runRead(ctx context.Context, e *env, args []string) (err error) {
	f := newFlags("read", true)
	f.addNoLogin()
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("read needs SERVER and REF")
	}
	e.offline = e.offline || f.offline
	e.preconnect = pos[0]
	eng, err := e.openEngine(ctx, f.config, !f.noLogin)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, eng.Close()) }()
	if isRef(pos[1]) {
		// References belong to a session: make them in this one.
		if r := eng.Do(ctx, &proxy.Request{Action: proxy.ActionResourcesList, Server: pos[0]}); r.IsError {
			return e.printResult(r, f.json)
		}
	} else if r := eng.Do(ctx, &proxy.Request{Action: proxy.ActionServer, Server: pos[0]}); r.IsError {
		return e.printResult(r, f.json) // indexes the server, so its templates are known
	}
	r := eng.Do(ctx, &proxy.Request{Action: proxy.ActionResourcesRead, Server: pos[0], Resource: pos[1]})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return e.printResult(r, f.json)
}

// isRef reports whether s is a resource reference rather than a URI.
func isRef(s string) bool { return strings.HasPrefix(s, "r") && !strings.Contains(s, ":") }
