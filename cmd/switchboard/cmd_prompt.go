package main

import (
	"fmt"
	"strings"

	"github.com/switchboard-mcp/switchboard/proxy"
)

func promptCommand() *command {
	return verb{
		name: "prompt", summary: "get a prompt with its arguments", usage: "SERVER NAME [key=value …] [--json]", args: 2,
		help: `Gets a prompt. Its arguments are checked against the prompt's declaration
before any request; the messages are labelled as untrusted data.`,
		request: func(pos []string) (*proxy.Request, error) {
			args := map[string]any{}
			for _, p := range pos[2:] {
				k, v, ok := strings.Cut(p, "=")
				if !ok || k == "" {
					return nil, usagef("argument %q is not key=value", p)
				}
				args[k] = v
			}
			if len(args) != len(pos[2:]) {
				return nil, fmt.Errorf("an argument is given twice")
			}
			return &proxy.Request{Action: proxy.ActionPromptsGet, Server: pos[0], Prompt: pos[1], Args: args}, nil
		},
	}.command()
}
