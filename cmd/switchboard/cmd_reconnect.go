package main

import "github.com/switchboard-mcp/switchboard/proxy"

func reconnectCommand() *command {
	return verb{
		name: "reconnect", summary: "close a server's connection and connect again", usage: "SERVER [--json]", args: 1,
		help: "Connects the server anew, which checks that it starts and answers.",
		request: func(pos []string) (*proxy.Request, error) {
			return &proxy.Request{Action: proxy.ActionReconnect, Server: pos[0]}, exactly(pos, 1, "reconnect")
		},
	}.command()
}
