// Package switchboard is one MCP endpoint in front of all of a user's MCP
// servers.
//
// An agent that mounts Switchboard sees one compact proxy tool, mcp, instead
// of every tool of every server. Behind it an [Engine] reads the user's
// configuration (package config), connects each server lazily on first use
// and owns those connections (package upstream), keeps a catalog of what
// the servers offer for search and description (package catalog), bounds
// every result and labels untrusted data (package bound), and keeps secrets
// out of everything it shows. The request contract lives in package proxy.
//
// The same engine serves the switchboard command line, switchboard serve,
// and Go programs that embed it: make one with [New], register the tool that
// [Engine.Tool] describes with the host, and pass each call's arguments to
// [Engine.Handle]. [Result.MCP] turns a result into an MCP tool result. Give
// each agent its own [Session] where several share one engine.
//
// A host can ship MCP servers in its own binary (host.Server, in
// [Options].Servers), which the engine connects in memory and treats like
// configured ones, and declare narrow tools over any server's tools, with
// some arguments fixed (host.Facade, in [Options].Facades).
package switchboard
