// Package switchboard is one MCP endpoint in front of all of a user's MCP
// servers.
//
// An agent that mounts Switchboard sees one compact proxy tool, mcp, instead
// of every tool of every server. Behind it the engine reads the user's
// configuration (package config), connects each server lazily on first use
// and owns those connections (package upstream), keeps a catalog of the
// servers' tools for search and description, bounds every result, and keeps
// secrets out of everything it prints. The same engine serves the
// switchboard command line, switchboard serve (an MCP server over stdio and
// Streamable HTTP), and Go programs that embed it.
//
// The engine type itself arrives with the proxy tool; until then this
// package documents the whole and the subpackages carry the work.
package switchboard
