// Package gateway is the body of the Switchboard engine: every operation
// of the mcp tool, and what the engine's users need around it (status,
// change events, indexing, pins and approvals, OAuth logins, progress).
// It is internal: the root package switchboard is the library that wraps
// it (its Options are this package's, converted), and front, which serves
// an engine over MCP, is the only other package that imports it.
//
// # What it owns
//
// An [Engine] is one configuration made live: the connection pool
// (internal/upstream), the catalog (internal/catalog), the pins and the
// audit trail (policy's types, kept in pins.db, the catalog or the shared
// store), the spiller of results too large to show (bound), the embedder
// of semantic search (internal/embeddings) and the engine's goroutines,
// which Close cancels and waits for. A [Session] is one agent's view of it:
// its resource references and the calls it allowed for the session.
//
// # Data flow
//
// A request goes one way, gathering data and rendering it last:
//
//	config.Config ──► New: the pool (upstream: lazy connections, processes,
//	                  OAuth), the catalog, the pins and the audit trail
//	proxy.Parse ────► Session.Do ─► gather:
//	                    the catalog answers names, search and describe
//	                    (connecting and listing a server it does not know:
//	                    Engine.entry, index.go)
//	                    pins reconcile what a server offers with what was
//	                    approved (pins.go: quarantine) before anyone sees it
//	                    a call is admitted (policy.go: not quarantined, and
//	                    the approval rule allows it: approve.go), sent
//	                    through the pool (calls.go) and audited (policy.go)
//	                  ─► render: one pure proxy function per operation turns
//	                    the data into text and details (proxy.Call, …)
//	                  ─► bound: a result is converted and kept within
//	                    settings.output, the rest in spill files (fit.go)
//
// Servers the host ships in its binary (host.Server) join the pool as
// in-process servers, and facades (host.Facade) rewrite a server's list
// and calls inside the pool (packaged.go, facade.go). What servers change
// on their own (list_changed, a connection lost) comes back from the pool
// as an event: the catalog is refreshed and subscribers told (events.go).
//
// # Who calls it
//
// The root package, for Go hosts, the switchboard command line and its
// panel, through the operations of the mcp tool (Handle, Do) and the
// library's methods; and front, which also uses what only a gateway needs
// (passthrough.go, fast.go: direct tools, transparent mode, the fast lane,
// roots, the redaction set and the tracer). A method that only front needs
// stays here, not in the library.
package gateway
