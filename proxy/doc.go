// Package proxy is the whole contract of the mcp proxy tool, with no I/O:
// the tool's definition (its name, schema and description), the requests
// an agent may send and their strict validation (Parse), how tool and
// server names are matched (Names, Normalize), and the answers: the Result
// of every operation, with its text and its Details, made by one pure
// renderer per operation from what the engine gathered.
//
// The engine (the root package, switchboard) carries requests out: it
// gathers from the servers and the catalog, hands what it found to a
// renderer here, and bounds the result to settings.output. The renderers:
//
//	| request                                      | renderer     |
//	|----------------------------------------------|--------------|
//	| {}                                           | Status       |
//	| {"server": s}                                | Tools        |
//	| {"search": q}                                | Search       |
//	| {"describe": name}                           | Describe     |
//	| {"tool": name, "args": {…}}                  | Call         |
//	| {"operation": "resources.list", …}           | Resources    |
//	| {"operation": "resources.read", …}           | Read         |
//	| {"operation": "prompts.list", …}             | Prompts      |
//	| {"operation": "prompts.get", …}              | Prompt       |
//	| {"operation": "instructions", …}             | Instructions |
//	| {"operation": "reconnect", …}                | Reconnected  |
//	| {"connect": s}                               | Connected    |
//	| {"action": "auth-start", …}                  | AuthStarted  |
//	| {"action": "auth-complete", …}               | LoggedIn     |
//	| any that fails                               | ErrorResult  |
//
// Details, and the types it holds, are what the CLI's --json prints and
// what the mcp tool returns as structured content: a stable interface,
// to which fields are only ever added.
package proxy

import "encoding/json"

// ToolName is the name of the proxy tool.
const ToolName = "mcp"

// Tool is the definition of the proxy tool, ready to register with any MCP
// server or agent host.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}
