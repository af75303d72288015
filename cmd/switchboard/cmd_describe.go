package main

import "github.com/switchboard-mcp/switchboard/proxy"

func describeCommand() *command {
	var server string
	var schemas bool
	return verb{
		name: "describe", summary: "show a tool's full description and input schema", usage: "NAME [--server S] [--schemas] [--json]", args: 1,
		help: `Describes one tool from the catalog, connecting only if the catalog does not
know it. NAME is the tool's name (with --server), or server_name. Case does
not matter, and - and _ are alike. --schemas adds the tool's input and
output as a TypeScript signature.`,
		setup: func(f *flags) {
			f.StringVar(&server, "server", "", "the `server` of the tool")
			f.BoolVar(&schemas, "schemas", false, "add the input and output as a TypeScript signature")
		},
		request: func(pos []string) (*proxy.Request, error) {
			return &proxy.Request{Action: proxy.ActionDescribe, Name: pos[0], Server: server, IncludeSchemas: schemas}, exactly(pos, 1, "describe")
		},
	}.command()
}
