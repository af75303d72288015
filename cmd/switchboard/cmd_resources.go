package main

import "github.com/switchboard-mcp/switchboard/proxy"

func resourcesCommand() *command {
	return verb{
		name: "resources", summary: "list a server's resources and resource templates", usage: "SERVER [--json]", args: 1,
		help: "Lists the server's resources, each named by a short reference (r1, r2, …)\nthat switchboard read takes, and its resource templates.",
		request: func(pos []string) (*proxy.Request, error) {
			return &proxy.Request{Action: proxy.ActionResourcesList, Server: pos[0]}, exactly(pos, 1, "resources")
		},
	}.command()
}
