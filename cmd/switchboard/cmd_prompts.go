package main

import "github.com/switchboard-mcp/switchboard/proxy"

func promptsCommand() *command {
	return verb{
		name: "prompts", summary: "list a server's prompts and their arguments", usage: "SERVER [--json]", args: 1,
		help: "Lists the server's prompts; required arguments are marked with *.",
		request: func(pos []string) (*proxy.Request, error) {
			return &proxy.Request{Action: proxy.ActionPromptsList, Server: pos[0]}, exactly(pos, 1, "prompts")
		},
	}.command()
}
