package main

import "github.com/switchboard-mcp/switchboard/proxy"

func toolsCommand() *command {
	return verb{
		name: "tools", summary: "connect a server and list its tools", usage: "SERVER [--json]", args: 1,
		help: "Connects the server (starting it if it is a command) and lists its tools with\nthe first line of each description, and the head of its instructions.",
		request: func(pos []string) (*proxy.Request, error) {
			return &proxy.Request{Action: proxy.ActionServer, Server: pos[0]}, exactly(pos, 1, "tools")
		},
	}.command()
}
