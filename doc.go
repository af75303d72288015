// Package switchboard is the Go library of Switchboard: one MCP endpoint in
// front of all of a user's MCP servers, embedded in a Go agent host.
//
// A model that uses Switchboard sees one compact tool, mcp, instead of
// every tool of every server: it searches for a tool by need, describes it
// and calls it by name. Behind the tool an [Engine] reads the configuration
// (package config), connects each server lazily on first use, keeps a
// catalog of what the servers offer for search, bounds every result and
// labels untrusted data, and keeps secrets out of everything it shows.
//
// A host makes an engine with [New] and closes it with [Engine.Close];
// registers the tool that [Engine.Tool] describes with its model; and
// passes each call's arguments to [Engine.Handle], whose answer is a
// proxy.Result: text for the model, images, and details for programs
// (Result.MCP makes it an MCP tool result). Package proxy is the whole
// contract of the tool: every request and its answer.
//
// Where several agents share one engine, give each its own [Session]
// ([Engine.NewSession]): the resource references one was given mean
// nothing to another. [Engine.Status] shows every server without
// connecting; [Engine.Subscribe] tells of changes of a server's state or
// of what it offers; [Engine.Index] lists servers ahead of time for
// search, and [Engine.Prune] drops from the catalog those no longer
// configured. A call made with a context of [WithProgress] reports the
// server's progress as it goes.
//
// The host's user stays in charge: [Options].Approver asks them about
// calls an approval rule covers; [Engine.Quarantined] shows the tools whose
// definitions changed since approved, which the model cannot call until
// [Engine.Approve] accepts the change; [Options].Prompt, [Engine.Login],
// [Engine.Logout] and [Engine.AuthStatus] log remote servers in with OAuth
// and show the logins.
//
// A host can ship MCP servers in its own binary (host.Server, in
// [Options].Servers), which the engine connects in memory and treats like
// configured ones, and declare narrow tools over any server's tools, with
// some arguments fixed (host.Facade, in [Options].Facades).
//
// Replicas that share their state set settings.store: [OpenStore] opens
// its PostgreSQL database and the encrypted credential store in it, for
// [Options].Store and [Options].Credentials.
//
// The switchboard command line and its panel are built on this package,
// as a host builds on it; switchboard serve serves the same engine over
// stdio and Streamable HTTP (package front). What the engine is made of
// (connections, the catalog, the engine's body) is internal: a host names
// only this package and those its API names (config, proxy, host, policy,
// oauth, credstore, telemetry); see docs/library.md.
package switchboard
