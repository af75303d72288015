package switchboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/bound"
	"github.com/switchboard-mcp/switchboard/catalog"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/privfile"
	"github.com/switchboard-mcp/switchboard/oauth"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/proxy"
	"github.com/switchboard-mcp/switchboard/upstream"
)

// ToolName is the name of the proxy tool.
const ToolName = "mcp"

// Options configures an Engine. The zero value works.
type Options struct {
	// Lookup resolves ${VAR} references when a server connects.
	// Default: os.LookupEnv.
	Lookup func(string) (string, bool)

	// Credentials is the credential store: ${secret:NAME} references
	// resolve from it when a server connects, and remote servers' OAuth
	// tokens and client registrations are kept in it (without it, no
	// server logs in with OAuth). credstore.Open returns the
	// one settings.credentialStore names. Default: none, and a server that
	// refers to a secret fails to connect, saying so.
	Credentials credstore.Store

	// BaseEnv is the environment every stdio child starts from.
	// Default: upstream.BaseEnv(os.Environ()).
	BaseEnv []string

	// Logger receives diagnostics. Default: discard.
	Logger *slog.Logger

	// CatalogPath is the catalog file. Default: catalog.db in the
	// configuration's cache directory.
	CatalogPath string

	// SpillDir is where results too large to show are written, in a
	// directory of this process's own. Default: switchboard-spill-UID in
	// the system's temporary directory (switchboard-spill on Windows, where
	// that directory is the user's own).
	SpillDir string

	// KeepSpills, when positive, keeps this process's spill files after
	// Close, for a user who reads them once the process has exited (the
	// CLI's case), and New removes those nothing was written to for longer
	// than this. Zero (the default, for a long-lived process): Close
	// removes them, and New removes at once those of processes that died.
	// SpillDir should then be a directory of its own.
	KeepSpills time.Duration

	// Client is a template for the go-sdk client options of every upstream
	// connection (see upstream.Options.Client).
	Client *mcp.ClientOptions

	// ClientMiddleware is receiving middleware for the go-sdk client of
	// every upstream connection (see upstream.Options.ClientMiddleware).
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

	// Roots are the roots offered to servers that ask for them (roots/list):
	// the directories a filesystem server, for one, may work in. SetRoots
	// replaces them. Default: none.
	Roots []*mcp.Root

	// Supervise runs each stdio server under a supervisor, a copy of this
	// program, so that the server's whole process group ends when this
	// process dies, even by SIGKILL (Linux). The program must call
	// upstream.SupervisorMain first thing in main. See
	// upstream.Options.Supervise.
	Supervise bool

	// Approver asks the host's user whether a call that an approval rule
	// (settings.approve, a server's approve) covers may go ahead. Without
	// one, such calls are denied: the engine fails closed. A context made
	// with policy.WithApprover takes precedence (switchboard serve asks
	// each client that way).
	Approver policy.Approver

	// AuditPath is the audit trail's file. Default: audit.jsonl in the
	// configuration's state directory.
	AuditPath string
}

// Engine is Switchboard: the proxy tool and every operation behind it,
// over one configuration. Its methods are safe for concurrent use.
type Engine struct {
	cfg   *config.Config
	opts  Options
	log   *slog.Logger
	pool  *upstream.Pool
	cat   *catalog.Catalog
	spill *bound.Spiller
	def   *Session  // the session of Handle and of the engine's own methods
	emb   *embedder // nil without settings.embeddings
	memo  memo      // catalog entries read or written, and definition hashes

	fails failureMarks // what recordFailures wrote to the catalog
	pol   enginePolicy // the audit trail (approve.go)

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // background refreshes

	mu      sync.Mutex
	subs    map[int]func(ServerStatus)
	nextSub int
	closed  bool
	refresh map[string]bool // servers whose change is being handled: whether another came

	closeOnce sync.Once
	closeErr  error
}

// New returns an engine over cfg. It starts no server unless one's
// lifecycle says so (eager, keep-alive), opens the catalog, and removes the
// spill directories of processes that died without cleaning up. A
// configuration that failed closed still makes an engine: status works, and
// every operation on a server reports the configuration's error.
func New(ctx context.Context, cfg *config.Config, opts *Options) (*Engine, error) {
	e := &Engine{cfg: cfg, subs: map[int]func(ServerStatus){}, refresh: map[string]bool{}}
	if opts != nil {
		e.opts = *opts
	}
	e.fillDefaults()
	e.memo.audience = e.opts.Audience
	e.ctx, e.cancel = context.WithCancel(context.Background())
	if _, err := bound.Sweep(e.opts.SpillDir, e.opts.KeepSpills); err != nil {
		e.log.Warn("removing stale spill directories", "err", err)
	}
	e.spill = bound.NewSpiller(e.opts.SpillDir, bound.Limits{MaxBytes: cfg.Settings.Output.MaxBytes, MaxLines: cfg.Settings.Output.MaxLines})
	if err := os.MkdirAll(filepath.Dir(e.opts.CatalogPath), 0o700); err != nil {
		return nil, fmt.Errorf("creating the cache directory: %w", err)
	}
	cat, err := catalog.Open(e.opts.CatalogPath)
	if err != nil {
		return nil, err
	}
	e.cat = cat
	if !e.opts.Passive {
		e.emb = newEmbedder(cfg.Settings.Embeddings, config.Lookup{Env: e.opts.Lookup, Secrets: e.opts.Credentials})
	}
	e.pool = upstream.New(e.usable(), &upstream.Options{
		Lookup: e.opts.Lookup, Credentials: e.opts.Credentials, BaseEnv: e.opts.BaseEnv, Logger: e.log, OnChange: e.onChange,
		ClientName: "switchboard", ClientVersion: e.opts.Version, Client: e.opts.Client,
		ClientMiddleware: e.opts.ClientMiddleware, Passive: e.opts.Passive, Roots: e.opts.Roots, Supervise: e.opts.Supervise,
		Prompt: e.opts.Prompt,
	})
	e.openPolicy()
	e.def = e.NewSession()
	return e, nil
}

func (e *Engine) fillDefaults() {
	o := &e.opts
	if o.Lookup == nil {
		o.Lookup = os.LookupEnv
	}
	if o.BaseEnv == nil {
		o.BaseEnv = upstream.BaseEnv(os.Environ())
	}
	e.log = o.Logger
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if o.CatalogPath == "" {
		o.CatalogPath = filepath.Join(e.cfg.Dirs.CacheDir(), "catalog.db")
	}
	if o.SpillDir == "" {
		o.SpillDir = privfile.TempDir("switchboard-spill")
	}
	if o.IndexConcurrency <= 0 {
		o.IndexConcurrency = 4
	}
	if o.Version == "" {
		o.Version = "dev"
	}
}

// usable returns the definitions the pool may connect: none when the
// configuration failed closed, and no disabled or invalid one.
func (e *Engine) usable() []*config.Server {
	if e.cfg.Err() != nil {
		return nil
	}
	var out []*config.Server
	for _, s := range e.cfg.Servers {
		if !s.Disabled && s.Err == nil {
			out = append(out, s)
		}
	}
	return out
}

// SetRoots replaces the roots offered to servers, now and on later
// connections, and tells connected servers that asked for roots that they
// changed (notifications/roots/list_changed). A host whose connections all
// serve one client passes that client's roots on with it.
func (e *Engine) SetRoots(roots []*mcp.Root) { e.pool.SetRoots(roots) }

// Config returns the configuration the engine runs.
func (e *Engine) Config() *config.Config { return e.cfg }

// closeRecordTimeout bounds the catalog write of Close.
const closeRecordTimeout = 5 * time.Second

// Close records the servers' last failures in the catalog, closes every
// connection, stops every child process, removes this process's spill
// files and closes the catalog. It is idempotent, safe to call
// concurrently, and bounded in time by the upstream close timeout and
// closeRecordTimeout.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		e.mu.Lock()
		e.closed = true
		e.mu.Unlock()
		e.cancel()
		// What this process learned of failing servers outlives it.
		ctx, cancel := context.WithTimeout(context.Background(), closeRecordTimeout)
		e.recordFailures(ctx)
		cancel()
		errs := []error{e.pool.Close()}
		e.wg.Wait()
		errs = append(errs, e.closeSpill(), e.cat.Close(), e.pol.audit.Close())
		e.closeErr = errors.Join(errs...)
	})
	return e.closeErr
}

// closeSpill removes this process's spill files, or leaves them for the
// user with Options.KeepSpills.
func (e *Engine) closeSpill() error {
	if e.opts.KeepSpills > 0 {
		return e.spill.Release()
	}
	return e.spill.Close()
}

// Tool is the definition of the proxy tool, ready to register with any MCP
// server or agent host.
type Tool struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}

// Tool returns the proxy tool's definition. The description names the
// configured servers and is byte-stable for a given configuration and
// catalog.
func (e *Engine) Tool(ctx context.Context) Tool {
	return Tool{Name: ToolName, Description: e.description(ctx), InputSchema: json.RawMessage(proxy.Schema)}
}

// Handle carries out one call of the proxy tool with its raw JSON arguments
// and returns what the model sees. Invalid arguments are an error result
// that connects nothing.
func (e *Engine) Handle(ctx context.Context, args json.RawMessage) *Result {
	return e.def.Handle(ctx, args)
}

// Do carries out a parsed request in the engine's own session.
func (e *Engine) Do(ctx context.Context, req *proxy.Request) *Result {
	return e.def.Do(ctx, req)
}

// Subscribe calls f with a server's status whenever its state or lists
// change, until the returned function is called. f runs on a goroutine of
// the engine's and must not block for long.
func (e *Engine) Subscribe(f func(ServerStatus)) (cancel func()) {
	e.mu.Lock()
	id := e.nextSub
	e.nextSub++
	e.subs[id] = f
	e.mu.Unlock()
	return func() {
		e.mu.Lock()
		delete(e.subs, id)
		e.mu.Unlock()
	}
}

// onChange is the pool's callback: it records failures, tells subscribers
// and refreshes the catalog of a connected server whose lists may have
// changed. Changes that come while a server's are being handled are
// handled once more after, so the last one is never lost.
func (e *Engine) onChange(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	if _, running := e.refresh[name]; running {
		e.refresh[name] = true // again when done
		return
	}
	e.refresh[name] = false
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for e.handleChange(name) {
		}
	}()
}

// handleChange handles a change of a server's state or lists, and reports
// whether another came meanwhile.
func (e *Engine) handleChange(name string) (again bool) {
	e.refreshCatalog(name)
	e.recordFailures(e.ctx, name)
	e.mu.Lock()
	subs := make([]func(ServerStatus), 0, len(e.subs))
	for _, f := range e.subs {
		subs = append(subs, f)
	}
	e.mu.Unlock()
	if len(subs) > 0 {
		for _, st := range e.Status(e.ctx) {
			if st.Name == name {
				for _, f := range subs {
					f(st)
				}
			}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if again = e.refresh[name] && !e.closed; again {
		e.refresh[name] = false
	} else {
		delete(e.refresh, name)
	}
	return again
}
