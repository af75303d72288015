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

// serverVerbs are the verbs that take one SERVER and send one request
// about it, in a table rather than a file each: only their words differ.
var serverVerbs = map[string]struct {
	summary, help string
	action        proxy.Action
}{
	"tools": {
		summary: "connect a server and list its tools",
		help:    "Connects the server (starting it if it is a command) and lists its tools with\nthe first line of each description, and the head of its instructions.",
		action:  proxy.ActionServer,
	},
	"resources": {
		summary: "list a server's resources and resource templates",
		help:    "Lists the server's resources, each named by a short reference (r1, r2, …)\nthat switchboard read takes, and its resource templates.",
		action:  proxy.ActionResourcesList,
	},
	"prompts": {
		summary: "list a server's prompts and their arguments",
		help:    "Lists the server's prompts; required arguments are marked with *.",
		action:  proxy.ActionPromptsList,
	},
	"instructions": {
		summary: "show the instructions a server gives agents",
		help:    "Connects the server and prints the instructions it sent when it connected.",
		action:  proxy.ActionInstructions,
	},
	"reconnect": {
		summary: "close a server's connection and connect again",
		help:    "Connects the server anew, which checks that it starts and answers.",
		action:  proxy.ActionReconnect,
	},
}

// serverVerb returns the command of the serverVerbs entry name.
func serverVerb(name string) *command {
	sv, ok := serverVerbs[name]
	if !ok {
		panic("no server verb " + name) // a typo in the command list
	}
	return verb{
		name: name, summary: sv.summary, usage: "SERVER [--json]", args: 1, help: sv.help,
		request: func(pos []string) (*proxy.Request, error) {
			return &proxy.Request{Action: sv.action, Server: pos[0]}, exactly(pos, 1, name)
		},
	}.command()
}
