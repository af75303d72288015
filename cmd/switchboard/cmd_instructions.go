package main

import "github.com/switchboard-mcp/switchboard/proxy"

func instructionsCommand() *command {
	return verb{
		name: "instructions", summary: "show the instructions a server gives agents", usage: "SERVER [--json]", args: 1,
		help: "Connects the server and prints the instructions it sent when it connected.",
		request: func(pos []string) (*proxy.Request, error) {
			return &proxy.Request{Action: proxy.ActionInstructions, Server: pos[0]}, exactly(pos, 1, "instructions")
		},
	}.command()
}
