// Package upstream owns Switchboard's connections to MCP servers.
//
// A [Pool] holds one connection state machine per configured server. It
// starts nothing it is not asked for: lazy servers (the default) connect on
// first use and close after their idle timeout; eager and keep-alive servers
// connect when the pool is made. Every operation is bounded by the server's
// request timeout, concurrent first uses share one connection attempt,
// callers asking for a list at once share one fetch of it per connection, a
// crashed child or dropped session is noticed and replaced on the next use,
// and Close ends every connection and child process within a bounded time.
// Should the process die without closing the pool, supervisors (Linux,
// Options.Supervise) end its stdio servers' process groups at once, and the
// next pool ends those a pool without them left (GroupDir). What a server
// starts outside its group (a setsid grandchild) is ended by its
// supervisor, or, without one, by Close or the next pool's sweep, which
// find it by a mark in its environment (Linux; see escape_linux.go).
//
// Lifecycles: "lazy" (the default) connects on first use and closes after
// idleTimeout without use (0: never); "eager" connects when the pool is made;
// "keep-alive" connects when the pool is made, pings every PingInterval and
// reconnects automatically; "lazy-keep-alive" connects on first use and is
// then kept alive like keep-alive (no idle close). Any server reconnects
// automatically after a crash when its reconnect.automatic is set; otherwise
// the next operation connects again.
//
// See DESIGN.md (Connections, Bounds) for the behaviour this implements.
package upstream

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/lifecycle"
	"github.com/switchboard-mcp/switchboard/internal/privfile"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/oauth"
	"github.com/switchboard-mcp/switchboard/telemetry"
)

// Defaults of Options.
const (
	DefaultProbeTimeout     = 3 * time.Second
	DefaultTerminateTimeout = 100 * time.Millisecond
	DefaultCloseTimeout     = 5 * time.Second
	DefaultPingInterval     = 30 * time.Second
)

// Options configures a Pool. The zero value works.
type Options struct {
	// Lookup resolves the ${VAR} references of env, headers and URL when a
	// server connects. Default: os.LookupEnv.
	Lookup func(string) (string, bool)

	// Credentials is the credential store that ${secret:NAME} references
	// resolve from when a server connects. Default: none, and a server
	// that refers to a secret fails to connect, saying so.
	Credentials credstore.Store

	// BaseEnv is the environment every stdio child starts from, before its
	// own env. Default: BaseEnv(os.Environ()), a small allow-list (PATH,
	// HOME, locale, temporary directories, proxies, …): a child does not
	// inherit switchboard's credentials.
	BaseEnv []string

	// Logger receives warnings (skipped tools, ignored stdout lines, failed
	// refreshes) and connection events. Default: discard.
	Logger *slog.Logger

	// OnChange is called when a server's state or lists change, with no lock
	// held, possibly concurrently. It must not block for long.
	OnChange func(server string)

	// ClientName and ClientVersion identify switchboard to servers.
	// Default: "switchboard", "dev".
	ClientName, ClientVersion string

	// Client is a template for the go-sdk client options of every
	// connection: this is where server-to-client requests (sampling,
	// elicitation) and other notification handlers plug in; roots are
	// the pool's own (each server's config.Roots, Roots, SetRoots), and
	// so is the roots capability of Capabilities. The pool
	// sets its own list_changed handlers, calling the template's after its
	// own, and the logger if the template has none.
	Client *mcp.ClientOptions

	// ClientMiddleware is receiving middleware added to the go-sdk client
	// of every connection, to see what a server sends before the client
	// handles it (a gateway passes elicitation requests on this way: the
	// client's own checks would reject schemas its peer accepts).
	ClientMiddleware []mcp.Middleware

	// ProbeTimeout bounds the server/discover probe of protocolVersion
	// "latest" ("auto" over HTTP). It is capped at half the server's request timeout. Default 3s.
	ProbeTimeout time.Duration

	// TerminateTimeout is how long closing a stdio server waits after
	// closing its stdin before it signals the process group (SIGTERM, then
	// SIGKILL a second later). Default 100ms: a server that exits when its
	// input ends (as the MCP stdio transport asks) does so well within it,
	// and one that does not (most Node servers keep running) would make
	// every one-shot command wait for nothing.
	TerminateTimeout time.Duration

	// CloseTimeout bounds Close: after it, children still running are
	// killed. Default 5s.
	CloseTimeout time.Duration

	// PingInterval is the health-check interval of keep-alive servers.
	// Default 30s.
	PingInterval time.Duration

	// MaxMessageBytes bounds one message from a server. Default 16 MiB.
	MaxMessageBytes int

	// MaxReadBytes caps the result of one resources/read or prompts/get, as
	// JSON; a larger one fails with ClassBound. Default 8 MiB.
	MaxReadBytes int

	// HTTPTransport is the base round tripper of HTTP servers. Default: a
	// clone of http.DefaultTransport, owned by the pool.
	HTTPTransport http.RoundTripper

	// Passive makes a pool that starts nothing by itself: eager and
	// keep-alive servers connect on first use, like lazy-keep-alive ones.
	Passive bool

	// Prompt, when set, lets a connection to a server that needs an OAuth
	// login start one: it takes the user to the authorization URL (see
	// oauth.Prompter), and the operation goes on once the user has logged
	// in; its request timeout does not count the wait. Without it, the
	// operation fails with ErrNeedsAuth and a hint naming the command.
	Prompt oauth.Prompter

	// Roots are the roots of the client the pool's connections serve (a
	// gateway's one client), until SetRoots replaces them. They are
	// offered only to servers whose configuration accepts the client's
	// roots (config.Roots.Client), besides the directories it lists; a
	// server whose configuration has no roots is offered none, and not
	// told of the capability. Default: none.
	Roots []*mcp.Root

	// Supervise starts each stdio server under a supervisor, a copy of this
	// program, so that the kernel ends the server's whole process group
	// (what npx or sh started too) when this process dies, however it dies:
	// SIGKILL, the OOM killer, a crash. The supervisor runs from the
	// initialisation of this package, before main (see SupervisorMain).
	// Linux only; elsewhere it is ignored. Without it, the kernel kills
	// only the server's own process, on Linux, and the groups left are
	// ended by the next pool (GroupDir).
	Supervise bool

	// Stderr, if set, is called with each line a stdio server writes to
	// stderr (at most 4 KiB of it; the rest of a longer line is dropped),
	// besides the tail every server keeps (Pool.Stderr). It runs on the
	// goroutine that reads the server's stderr: it must not block for long.
	// A line may hold anything the server printed, but the secret values
	// of Redact, which are replaced by [redacted].
	Stderr func(server, line string)

	// Redact is where the pool keeps the secret values it resolves (each
	// server's header, env and URL secrets, the values of ${secret:…}
	// references, its OAuth client secret and the bearer tokens it
	// sends), and what it replaces them with [redacted] by wherever text
	// leaves it: stderr lines (Stderr, Pool.Stderr), its log, the log
	// messages servers send, and its errors. A host that writes
	// elsewhere (an audit trail, traces) cleans that text with the same
	// set. Default: a set of the pool's own.
	Redact *redact.Set

	// Telemetry, if set, traces every request to a server and every
	// connection attempt, and passes the trace context on (see package
	// telemetry). Nil traces nothing.
	Telemetry *telemetry.Tracer

	// InProcess holds the go-sdk servers of the in-process servers
	// (config.TransportInProcess), by name: a Go host's packaged servers.
	// Each connection to one is a new session of it, in memory.
	InProcess map[string]*mcp.Server

	// Rewriter, when set, changes what callers see of servers' tools and
	// how their calls are sent (a Go host's facades).
	Rewriter Rewriter

	// GroupDir is where the pool records the process groups of its stdio
	// servers while they run. A pool made after another died without
	// closing its servers ends the groups that one left (Linux). Default:
	// switchboard-groups-UID in the system's temporary directory.
	GroupDir string
}

// A Pool holds the connections to a set of servers. Its methods are safe for
// concurrent use.
type Pool struct {
	opts    Options
	log     *slog.Logger
	servers map[string]*server
	names   []string        // sorted
	ownHTTP *http.Transport // closed by Close when we made it
	groups  *groupLog       // the process groups of our stdio children
	mark    string          // in every stdio child's environment (escape_linux.go); "" for none
	since   pidWindow       // where Close looks for the mark
	roots   rootsState
	users   userServers // per-user connections (peruser.go)

	bg  *lifecycle.Group // every goroutine the pool starts
	ctx context.Context  // bg's: cancelled by Close; parent of all background work

	fastCalls atomic.Int64 // calls sent on the fast path (CallToolRaw)

	closeOnce sync.Once
	closeDone chan struct{}
}

// New returns a pool for servers. It copies opts and fills in defaults. It
// starts nothing for lazy servers; eager and keep-alive servers start
// connecting in the background, unless the pool is passive.
func New(servers []*config.Server, opts *Options) *Pool {
	p := &Pool{servers: make(map[string]*server), closeDone: make(chan struct{})}
	if opts != nil {
		p.opts = *opts
	}
	p.fillDefaults()
	sweepGroups(p.opts.GroupDir, p.log)
	if !p.opts.Supervise {
		p.mark, p.since = newMark(), openPidWindow()
	}
	p.groups = newGroupLog(p.opts.GroupDir, p.mark, p.log)
	p.roots.client = cloneRoots(p.opts.Roots)
	p.bg = lifecycle.New()
	p.ctx = p.bg.Context()
	for _, cfg := range servers {
		if _, dup := p.servers[cfg.Name]; dup {
			continue
		}
		p.servers[cfg.Name] = newServer(p, cfg)
		p.names = append(p.names, cfg.Name)
	}
	sort.Strings(p.names)
	for _, name := range p.names {
		if s := p.servers[name]; s.eager() && !p.opts.Passive {
			p.goOwned(s.connectEagerly)
		}
	}
	return p
}

func (p *Pool) fillDefaults() {
	o := &p.opts
	if o.Lookup == nil {
		o.Lookup = os.LookupEnv
	}
	if o.BaseEnv == nil {
		o.BaseEnv = BaseEnv(os.Environ())
	}
	o.BaseEnv = slices.Clone(o.BaseEnv)
	if o.Redact == nil {
		o.Redact = &redact.Set{}
	}
	p.log = o.Logger
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.log = slog.New(redact.Handler(o.Redact, p.log.Handler()))
	if o.ClientName == "" {
		o.ClientName = "switchboard"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	setDefault(&o.ProbeTimeout, DefaultProbeTimeout)
	setDefault(&o.TerminateTimeout, DefaultTerminateTimeout)
	setDefault(&o.CloseTimeout, DefaultCloseTimeout)
	setDefault(&o.PingInterval, DefaultPingInterval)
	setDefault(&o.MaxMessageBytes, DefaultMaxMessageBytes)
	setDefault(&o.MaxReadBytes, DefaultMaxReadBytes)
	setDefault(&o.GroupDir, privfile.TempDir("switchboard-groups"))
	if o.HTTPTransport == nil {
		p.ownHTTP = http.DefaultTransport.(*http.Transport).Clone()
		o.HTTPTransport = p.ownHTTP
	}
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// goOwned runs f in a goroutine that Close waits for. It reports false, and
// does not run f, once the pool is closed.
func (p *Pool) goOwned(f func()) bool { return p.bg.Go(f) }

// notify calls OnChange. Callers hold no lock.
func (p *Pool) notify(name string) {
	if p.opts.OnChange != nil {
		p.opts.OnChange(name)
	}
}

// Names returns the configured server names, sorted.
func (p *Pool) Names() []string { return slices.Clone(p.names) }

// Snapshot returns the status of every server, sorted by name. It never
// connects and never resolves a secret.
func (p *Pool) Snapshot() []Status {
	out := make([]Status, 0, len(p.names))
	for _, name := range p.names {
		out = append(out, p.servers[name].status())
	}
	return out
}

// Stderr returns what the server's current or last stdio child wrote to
// stderr lately (at most 8 KiB), for diagnosis. It may hold anything the
// server printed, but the secret values of Options.Redact.
func (p *Pool) Stderr(name string) (string, error) {
	s, err := p.server(name, "reading stderr")
	if err != nil {
		return "", err
	}
	return p.opts.Redact.String(s.stderrTail()), nil
}

// server returns the named server, or an error naming the configured ones.
func (p *Pool) server(name, op string) (*server, error) {
	if s, ok := p.servers[name]; ok {
		return s, nil
	}
	return nil, &Error{Server: name, Op: op, Class: ClassConfig,
		Err: fmt.Errorf("%w (configured: %s)", ErrUnknownServer, strings.Join(p.names, ", "))}
}

// Close closes every server in parallel and stops all background work. It
// returns within about CloseTimeout: a stdio child still running then is
// killed with its process group, so no child outlives Close. (A Streamable
// HTTP session's closing DELETE is bounded by the SDK at 5 s more.) Close is
// idempotent and safe to call concurrently; later calls wait for the first.
// Operations after Close fail with ErrClosed. Calling Close on SIGINT or
// SIGTERM is enough to leave nothing behind.
func (p *Pool) Close() error {
	p.closeOnce.Do(func() {
		p.bg.Stop()
		p.closeServers()
		p.bg.Wait()
		if killed := killMarked(p.mark, p.since); len(killed) > 0 {
			p.log.Info("ended processes that stdio servers started outside their process groups", "pids", killed)
		}
		p.groups.close()
		if p.ownHTTP != nil {
			p.ownHTTP.CloseIdleConnections()
		}
		close(p.closeDone)
	})
	<-p.closeDone
	return nil
}

// closeServers shuts every server down in parallel; after CloseTimeout it
// kills the children that remain, which ends the shutdowns promptly.
//
// One server with a connection is shut down on the caller's goroutine:
// a command that used one server closes its stdin at once, rather than
// after a thread has woken for a goroutine of its own (about half a
// millisecond on a busy two-core machine).
func (p *Pool) closeServers() {
	done := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		t := time.NewTimer(p.opts.CloseTimeout)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C:
		}
		p.log.Warn("closing servers took too long; killing their processes", "timeout", p.opts.CloseTimeout)
		for _, s := range p.servers {
			s.kill()
		}
		for _, s := range p.closeUsers() {
			s.kill()
		}
	}()
	var wg sync.WaitGroup
	var here *server
	for _, s := range p.closeUsers() {
		wg.Go(s.shutdown)
	}
	for _, s := range p.servers {
		if here == nil && s.connectedOrDialing() {
			here = s
			continue
		}
		wg.Go(s.shutdown)
	}
	if here != nil {
		here.shutdown()
	}
	wg.Wait()
	close(done)
	<-watched
}
