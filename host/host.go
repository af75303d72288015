// Package host describes what a Go program that embeds Switchboard adds to
// the user's configuration: MCP servers it ships in its own binary
// ([Server], in switchboard.Options.Servers), and narrow, fixed tools over
// servers' tools ([Facade], in switchboard.Options.Facades).
//
// A packaged server is a go-sdk server that Switchboard connects in memory
// and treats like a configured one. A facade is a tool of a server that no
// server lists: its arguments are checked against its own schema, then
// passed on, with some fixed, to one of the server's own tools, which the
// facade may hide.
package host

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
)

// Server is an MCP server a Go host ships in its own binary: a go-sdk
// server the host built, that Switchboard connects in memory. It is a
// server like the configured ones: connected lazily (or as Lifecycle says)
// and closed when idle, listed in status (transport "in-process"),
// indexed in the catalog, searched, described and called through the mcp
// tool, with every result bounded. No configuration file can define,
// replace or disable it: it shadows a configured server of the same name
// (whose definition status then names, in a warning), and it stays usable
// when the configuration fails closed.
type Server struct {
	// Name is the server's name, like a configured server's: 1 to 64
	// letters, digits, '-' or '_'.
	Name string

	// Server is the server. Each connection Switchboard makes is a new
	// session of it (Server.Connect over mcp.NewInMemoryTransports), so
	// the host may serve other sessions of it too.
	Server *mcp.Server

	// Lifecycle is when to connect it, as for a configured server.
	// Default: config.LifecycleLazy.
	Lifecycle config.Lifecycle

	// IdleTimeout closes a lazy server's connection after this long
	// unused. Default: settings.idleTimeout.
	IdleTimeout time.Duration

	// RequestTimeout bounds each request. Default: settings.requestTimeoutMs.
	RequestTimeout time.Duration

	// DirectTools names the tools (or globs of them, "*" for all) that a
	// gateway (package front, switchboard serve) also exposes as tools of
	// their own, as directTools does for a configured server.
	DirectTools []string

	// SearchKeywords gives tools extra words for search, as
	// searchKeywords does for a configured server.
	SearchKeywords map[string][]string

	// Revision identifies this build of the server's tools: the catalog
	// keeps what it learned of the server across runs while Revision stays
	// the same. Default: a new value each time New runs, so the server is
	// listed afresh (in memory) by each engine that needs its catalog.
	Revision string
}

// Facade is a narrow, fixed tool a Go host declares over one tool of a
// server, packaged or configured: some of the tool's arguments are fixed,
// the others come from the facade's own arguments (renamed where the host
// says). It is a tool of that server like the ones it lists: it appears in
// search, describe and the server's tool list, is called through the mcp
// tool, and is a direct tool where Direct or the server's directTools say.
//
// switchboard.New checks a facade against its own schema, and against the
// tool it calls: at once for a packaged server (listed in memory), and
// each time a configured server's tools are listed, since New connects no
// configured server. A facade that does not fit is an error of New in the
// first case, naming the facade, the field and what to do; in the second
// it is left out of the list, with a warning in the log, and a call of it
// says why. The arguments of each call are checked against the facade's
// schema before anything is sent: bad ones get an error result.
type Facade struct {
	// Name is the facade's tool name, unique on its server: 1 to 128
	// letters, digits, '_', '-' or '.'.
	Name string

	// Description says what the facade does, for the model. Required.
	Description string

	// InputSchema is the JSON Schema of the facade's arguments, an object
	// schema. Each of its properties is passed to the tool under the same
	// name, or the one Rename gives. Default: no arguments.
	InputSchema json.RawMessage

	// Server is the server of the tool, packaged or configured.
	Server string

	// Tool is the tool's original name on Server.
	Tool string

	// Fixed are arguments sent to the tool on every call, whatever the
	// caller passes; the facade's schema cannot have properties of the same
	// names.
	Fixed map[string]any

	// Rename maps a property of the facade's schema to the name of the
	// tool's argument it is passed as.
	Rename map[string]string

	// Direct makes the facade a direct tool of a gateway (package front,
	// switchboard serve), as the server's directTools would.
	Direct bool

	// Exclusive hides the tool behind the facade: it is listed nowhere and
	// any call of it is refused, so the facade (and any other facade of the
	// tool) is the only way to reach it.
	Exclusive bool
}
