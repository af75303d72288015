package main

import (
	"context"

	"github.com/switchboard-mcp/switchboard/proxy"
)

// verb is a command that carries out one request of the proxy tool and
// prints its result: every such command is this thin printer.
type verb struct {
	name, summary, usage, help string
	args                       int // positional arguments required
	setup                      func(f *flags)
	request                    func(pos []string) (*proxy.Request, error)
}

func (v verb) command() *command {
	return &command{
		name: v.name, summary: v.summary, usage: v.usage,
		help: v.help + "\n\nWith --json, prints the result's structured details (documented in docs/cli.md).",
		run: func(ctx context.Context, e *env, args []string) error {
			f := newFlags(v.name, true)
			f.addNoLogin()
			if v.setup != nil {
				v.setup(f)
			}
			pos, _, err := f.parse(args)
			if err != nil {
				return err
			}
			if len(pos) < v.args {
				return usagef("%s needs %s", v.name, v.usage)
			}
			req, err := v.request(pos)
			if err != nil {
				return err
			}
			return e.runRequest(ctx, f, req)
		},
	}
}

// exactly checks that a verb got no more arguments than it takes.
func exactly(pos []string, n int, name string) error {
	if len(pos) > n {
		return usagef("%s takes %d argument(s); got %d", name, n, len(pos))
	}
	return nil
}
