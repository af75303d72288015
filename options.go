package switchboard

import (
	"database/sql"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/oauth"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/proxy"
	"github.com/switchboard-mcp/switchboard/telemetry"
)

// Options configures an Engine. The zero value works.
//
// (The engine's body has an options type with the same fields: New
// converts one to the other, so the compiler keeps them alike.)
type Options struct {
	// Lookup resolves ${VAR} references when a server connects.
	// Default: os.LookupEnv.
	Lookup func(string) (string, bool)

	// Credentials is the credential store: ${secret:NAME} references
	// resolve from it when a server connects, and remote servers' OAuth
	// tokens and client registrations are kept in it (without it, no
	// server logs in with OAuth). credstore.Open returns the
	// one settings.credentialStore names; with settings.store, OpenStore
	// returns the encrypted one in PostgreSQL that replicas share
	// (Store.Credentials). Default: none, and a server that refers to a
	// secret fails to connect, saying so.
	Credentials credstore.Store

	// BaseEnv is the environment every stdio child starts from, before its
	// own env. Default: the entries of os.Environ() a program needs to run
	// and nothing else: PATH, HOME, USER, LOGNAME, SHELL, LANG, LANGUAGE,
	// LC_*, TERM, TZ, the temporary and XDG base directories, the proxy
	// variables and the certificate locations, and on Windows the system's
	// own (SystemRoot, ComSpec, PATHEXT, APPDATA, …).
	BaseEnv []string

	// Logger receives diagnostics. Default: discard.
	Logger *slog.Logger

	// CatalogPath is the catalog file. Default: catalog.db in the
	// configuration's cache directory.
	CatalogPath string

	// PinsPath is the file of tool pins (docs/policy.md): state, kept
	// apart from the catalog, which is a cache. Default: pins.db in the
	// configuration's state directory (in the catalog when there is no
	// home directory to find that in).
	PinsPath string

	// SpillDir is where results too large to show are written, in a
	// directory of this process's own. It must be the user's (owned by
	// the user, and no one else may write to it, on Unix): spills in one
	// that is not fail, saying why. Default: switchboard-spill-UID in the
	// system's temporary directory (switchboard-spill on Windows, where
	// that directory is the user's own), which must be the user's alone
	// (mode 0700); if another user made that name first, or its mode is
	// looser, a fresh private directory beside it, removed by Close.
	SpillDir string

	// KeepSpills, when positive, keeps this process's spill files after
	// Close, for a user who reads them once the process has exited (the
	// CLI's case), and New removes those nothing was written to for longer
	// than this. Zero (the default, for a long-lived process): Close
	// removes them, and New removes at once those of processes that died.
	// SpillDir should then be a directory of its own.
	KeepSpills time.Duration

	// Client is a template for the go-sdk client options of every upstream
	// connection: this is where handlers of what servers send plug in
	// (sampling and elicitation requests, logging, resource updates).
	// Roots are the engine's own (Roots, and each server's configuration),
	// and so is the handling of list_changed notifications, which calls
	// the template's handlers after the engine's; progress notifications
	// of calls made with WithProgress go to their callers, and the rest to
	// the template's handler.
	Client *mcp.ClientOptions

	// ClientMiddleware is receiving middleware for the go-sdk client of
	// every upstream connection, to see what a server sends before the
	// client handles it.
	ClientMiddleware []mcp.Middleware

	// IndexConcurrency bounds how many servers are indexed at once.
	// Default 4.
	IndexConcurrency int

	// Version is reported to servers as the client version. Default "dev".
	Version string

	// Passive makes an engine that starts nothing by itself and resolves
	// no secret until asked: eager and keep-alive servers connect on first
	// use, like lazy ones, and settings.embeddings is not used. A process
	// that only reports status sets it.
	Passive bool

	// Audience is who reads the results' text: it decides how a result
	// suggests the next step. The default, proxy.Agents, shows requests of
	// the mcp tool; proxy.People shows switchboard commands, as the CLI
	// prints them.
	Audience proxy.Audience

	// Prompt is how a host lets its user log in to a server that needs an
	// OAuth login, at the moment an operation needs it: it is called with
	// the authorization URL, shows it to the user (opens a browser, or
	// asks the host's own client to), and the operation goes on once the
	// login completes on a loopback listener (see oauth.Prompter). Without
	// it, such an operation fails with needs-auth and names the command
	// that logs in (switchboard auth login SERVER). OAuth needs
	// Credentials, where tokens are kept.
	Prompt oauth.Prompter

	// Roots are the roots of the one client the host serves, offered
	// only to servers whose configuration accepts the client's roots
	// (roots: ["client"]), besides the directories it lists (see
	// config.Roots). A server whose configuration has no roots is offered
	// none, whatever Roots holds: a filesystem server replaces its own
	// directories with the roots it is offered. Default: none.
	Roots []*mcp.Root

	// Supervise runs each stdio server under a supervisor, a copy of this
	// program, so that the server's whole process group ends when this
	// process dies, even by SIGKILL (Linux). The supervisor runs from
	// package initialisation, before main. Linux only; elsewhere it is
	// ignored. Without it, the kernel kills only the server's own process,
	// on Linux, and the process groups left are ended by the next engine.
	Supervise bool

	// Preconnect names servers to start connecting at once, in the
	// background, whatever their lifecycle, while New goes on (it opens the
	// catalog meanwhile): a host that knows which server its first request
	// needs starts it early, as switchboard call --server does. New waits
	// for each connection only until it is under way (a stdio server's
	// process started, after its variables are resolved), not for its
	// handshake. Names that are not configured, disabled or unusable are
	// ignored: the request that needs one reports why. Nothing starts when
	// Passive is set.
	Preconnect []string

	// Stderr, if set, is called with each line a stdio server writes to
	// stderr (at most 4 KiB of it; the rest of a longer line is dropped),
	// on the goroutine that reads it: it must not block for long. A line
	// may hold anything the server printed, but the secret values the
	// engine resolved, which are replaced by [redacted]. Default: only the
	// tail of a server's stderr is kept, to explain a failure.
	Stderr func(server, line string)

	// Telemetry, if set, traces every request to a server and every
	// connection attempt, as children of the span in the operation's
	// context, and passes the trace context on to servers
	// (telemetry.New makes one from a host's TracerProvider). Default: none.
	Telemetry *telemetry.Tracer

	// Servers are MCP servers the host ships in its own binary, which
	// Switchboard connects in memory and treats like configured ones (see
	// host.Server). No configuration file can replace one.
	Servers []host.Server

	// Facades are narrow, fixed tools the host declares over servers'
	// tools, packaged or configured (see host.Facade).
	Facades []host.Facade

	// OnCall, if set, is told of every tool call once it ends (see
	// proxy.CallRecord: server, tool, times, outcome and sizes, never the
	// arguments or the result), on the goroutine that made it: it must
	// not block. A CallLog's Add keeps the recent ones.
	OnCall func(proxy.CallRecord)
	// Approver asks the host's user whether a call that an approval rule
	// (settings.approve, a server's approve; docs/policy.md) covers may go
	// ahead. Without one, such calls are denied: the engine fails closed.
	// A context made with policy.WithApprover takes precedence
	// (switchboard serve asks each client that way).
	Approver policy.Approver

	// AuditPath is the audit trail's file. Default: audit.jsonl in the
	// configuration's state directory.
	AuditPath string

	// Store is the PostgreSQL database that replicas share
	// (settings.store, docs/team.md). With it, the catalog (pins
	// included) and the audit trail live there instead of in CatalogPath,
	// PinsPath and AuditPath. OpenStore opens it from the configuration (its DB;
	// set Credentials and StoreKey to its Credentials and Key too), and the
	// caller closes it after the engine's Close:
	//
	//	st, err := switchboard.OpenStore(ctx, cfg, nil) // nil without settings.store
	//	if err != nil { … }
	//	defer st.Close()
	//	opts := &switchboard.Options{}
	//	if st != nil {
	//		opts.Store, opts.StoreKey, opts.Credentials = st.DB, st.Key, st.Credentials
	//	}
	//
	// Default: none.
	Store *sql.DB
	// StoreKey, required with Store, is settings.store.key (Store.Key): a
	// key derived from it signs the pins the engine writes to Store, and a
	// pin that something without it wrote or changed there is refused, so
	// its server's tools stay quarantined (docs/team.md).
	StoreKey []byte
}
