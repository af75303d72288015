package gateway

import (
	"context"
	"database/sql"
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
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/host"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/lifecycle"
	"github.com/switchboard-mcp/switchboard/internal/privfile"
	"github.com/switchboard-mcp/switchboard/internal/redact"
	"github.com/switchboard-mcp/switchboard/internal/upstream"
	"github.com/switchboard-mcp/switchboard/oauth"
	"github.com/switchboard-mcp/switchboard/policy"
	"github.com/switchboard-mcp/switchboard/proxy"
	"github.com/switchboard-mcp/switchboard/telemetry"
)

// Options configures an Engine: those of switchboard.Options, which
// documents them (the two types have the same fields, so that one converts
// to the other). The zero value works.
type Options struct {
	Lookup           func(string) (string, bool)
	Credentials      credstore.Store
	BaseEnv          []string
	Logger           *slog.Logger
	CatalogPath      string
	PinsPath         string
	SpillDir         string
	KeepSpills       time.Duration
	Client           *mcp.ClientOptions
	ClientMiddleware []mcp.Middleware
	IndexConcurrency int
	Version          string
	Passive          bool
	Audience         proxy.Audience
	Prompt           oauth.Prompter
	Roots            []*mcp.Root
	Supervise        bool
	Preconnect       []string
	Stderr           func(server, line string)
	Telemetry        *telemetry.Tracer

	Servers []host.Server
	Facades []host.Facade
	OnCall  func(proxy.CallRecord)

	Approver  policy.Approver
	AuditPath string
	Store     *sql.DB
	StoreKey  []byte
}

// Engine is Switchboard: the proxy tool and every operation behind it,
// over one configuration. Its methods are safe for concurrent use.
type Engine struct {
	cfg        *config.Config
	opts       Options
	log        *slog.Logger
	pool       *upstream.Pool
	cat        *catalog.Catalog
	spill      *bound.Spiller
	freshSpill string        // a spill directory made for this engine alone (defaultSpillDir), removed by Close
	def        *Session      // the session of Handle and of the engine's own methods
	emb        *embedder     // nil without settings.embeddings
	memo       memo          // catalog entries read or written, and definition hashes
	outputs    outputSchemas // tools' output schemas, resolved (checkOutput)

	progress progressListeners // calls whose callers asked for progress (WithProgress)
	logins   logins            // OAuth logins auth-start started (authflow.go)
	pending  pendingApprovals  // calls waiting for an approver group (approvals.go)
	clock    func() time.Time  // tests: the clock of the logins' expiry; nil is time.Now

	fails failureMarks // what recordFailures wrote to the catalog
	pol   enginePolicy // the audit trail and pins (policy.go)

	// redact is the one set of the secret values the engine's servers
	// resolve (upstream.Options.Redact); its log, its tracer
	// (opts.Telemetry), its audit records and its pool's stderr lines,
	// logs and errors are cleaned with it.
	redact *redact.Set

	bg  *lifecycle.Group // background refreshes and embeddings
	ctx context.Context  // bg's: cancelled by Close

	mu      sync.Mutex
	subs    map[int]func(context.Context, Event)
	nextSub int
	refresh map[string]bool               // servers whose change is being handled: whether another came
	told    map[string]proxy.ServerStatus // the status of each server subscribers were last told
	handled func(server string)           // tests: called when a change has been handled, e.mu held

	closeOnce sync.Once
	closeErr  error
}

// New returns an engine over cfg. It starts no server unless one's
// lifecycle says so (eager, keep-alive), opens the catalog, and removes the
// spill directories of processes that died without cleaning up. A
// configuration that failed closed still makes an engine: status works, and
// every operation on a server reports the configuration's error.
func New(ctx context.Context, cfg *config.Config, opts *Options) (*Engine, error) {
	if opts != nil && opts.Store != nil && len(opts.StoreKey) == 0 {
		return nil, errors.New("switchboard: Options.Store needs Options.StoreKey, the store's key (Store.Key): it signs the pins that replicas share")
	}
	h, err := addHosted(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	cfg = h.cfg
	e := &Engine{cfg: cfg, subs: map[int]func(context.Context, Event){}, refresh: map[string]bool{}, told: map[string]proxy.ServerStatus{}}
	if opts != nil {
		e.opts = *opts
	}
	e.fillDefaults()
	e.memo.audience = e.opts.Audience
	e.bg = lifecycle.New()
	e.ctx = e.bg.Context()
	if _, err := bound.Sweep(e.opts.SpillDir, e.opts.KeepSpills); err != nil {
		e.log.Warn("removing stale spill directories", "err", err)
	}
	maxBytes, maxLines := cfg.Settings.Output.Limits()
	e.spill = bound.NewSpiller(e.opts.SpillDir, bound.Limits{MaxBytes: maxBytes, MaxLines: maxLines})
	// The pool comes first, so that the servers named in Preconnect start
	// while the catalog opens; what they change is handled once the engine
	// is whole.
	ready := make(chan struct{})
	e.pool = upstream.New(e.usable(), &upstream.Options{
		Lookup: e.opts.Lookup, Credentials: e.opts.Credentials, BaseEnv: e.opts.BaseEnv, Logger: e.log,
		OnChange: func(name string) {
			<-ready
			if e.cat != nil {
				e.onChange(name)
			}
		},
		ClientName: "switchboard", ClientVersion: e.opts.Version, Client: e.clientOptions(),
		ClientMiddleware: e.opts.ClientMiddleware, Passive: e.opts.Passive, Roots: e.opts.Roots, Supervise: e.opts.Supervise,
		Prompt: e.opts.Prompt, InProcess: h.servers, Rewriter: h.rewriter(e.log), Telemetry: e.opts.Telemetry, Stderr: e.opts.Stderr,
		Redact: e.redact,
	})
	for _, name := range e.opts.Preconnect {
		e.pool.Preconnect(ctx, name)
	}
	if err := e.openState(ctx); err != nil {
		close(ready)
		e.pool.Close()
		return nil, err
	}
	close(ready)
	e.def = e.NewSession()
	return e, nil
}

// openState opens the catalog and the policy's state, and makes the
// embedder.
func (e *Engine) openState(ctx context.Context) error {
	cat, err := e.openCatalog(ctx)
	if err != nil {
		return err
	}
	if err := e.openPolicy(ctx); err != nil {
		cat.Close()
		return err
	}
	e.cat = cat
	e.openPins(cat)
	if !e.opts.Passive {
		e.emb = newEmbedder(e.cfg.Settings.Embeddings, config.Lookup{Env: e.opts.Lookup, Secrets: e.opts.Credentials})
	}
	return nil
}

// openCatalog opens the catalog: in the shared store when there is one,
// else the file at CatalogPath, creating its directory.
func (e *Engine) openCatalog(ctx context.Context) (*catalog.Catalog, error) {
	if e.opts.Store != nil {
		return catalog.OpenPostgres(ctx, e.opts.Store, e.opts.StoreKey)
	}
	if err := os.MkdirAll(filepath.Dir(e.opts.CatalogPath), 0o700); err != nil {
		return nil, fmt.Errorf("creating the cache directory: %w", err)
	}
	return catalog.Open(e.opts.CatalogPath)
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
	e.redact = &redact.Set{}
	e.log = slog.New(redact.Handler(e.redact, e.log.Handler()))
	o.Telemetry = o.Telemetry.Redacting(e.redact.String)
	if o.CatalogPath == "" {
		o.CatalogPath = filepath.Join(e.cfg.Dirs.CacheDir(), "catalog.db")
	}
	if o.SpillDir == "" {
		o.SpillDir = e.defaultSpillDir()
	}
	if o.IndexConcurrency <= 0 {
		o.IndexConcurrency = 4
	}
	if o.Version == "" {
		o.Version = "dev"
	}
}

// usable returns the definitions the pool may connect: none but the
// packaged ones when the configuration failed closed, and no disabled or
// invalid one.
func (e *Engine) usable() []*config.Server {
	var out []*config.Server
	for _, s := range e.cfg.Servers {
		if e.cfg.Err() != nil && !s.Packaged() {
			continue // failed closed: only what no file can disable
		}
		if !s.Disabled && s.Err == nil {
			out = append(out, s)
		}
	}
	return out
}

// Redact returns the set of the secret values the engine's servers
// resolve: a front that logs or traces what the engine hands it cleans
// that text with it too.
func (e *Engine) Redact() *redact.Set { return e.redact }

// Tracer returns the engine's tracer, which cleans what it records with
// Redact; nil when tracing is off.
func (e *Engine) Tracer() *telemetry.Tracer { return e.opts.Telemetry }

// SetRoots replaces the client's roots (Options.Roots), now and on later
// connections, and tells the connected servers that accept them
// (roots: ["client"]) and asked for roots that they changed
// (notifications/roots/list_changed). A host whose connections all serve
// one client passes that client's roots on with it; servers whose
// configuration does not accept them never see them.
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
		e.bg.Stop()
		// What this process learned of failing servers outlives it. It is
		// written while the servers stop, which for a stdio server is
		// waiting for its process to exit. The servers are told to stop
		// on this goroutine: one that starts the write instead gets to run
		// when this one waits, not when another thread has woken.
		snap := e.pool.Snapshot()
		recorded := make(chan struct{})
		go func() {
			defer close(recorded)
			ctx, cancel := context.WithTimeout(context.Background(), closeRecordTimeout)
			defer cancel()
			e.recordStatus(ctx, snap)
		}()
		errs := []error{e.pool.Close()}
		<-recorded
		e.bg.Wait()
		errs = append(errs, e.closeSpill(), e.cat.Close())
		if e.pol.audit != nil {
			errs = append(errs, e.pol.audit.Close())
		}
		if e.pol.pinFile != nil {
			errs = append(errs, e.pol.pinFile.Close())
		}
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
	err := e.spill.Close()
	if e.freshSpill != "" {
		_ = os.Remove(e.freshSpill) // empty now
	}
	return err
}

// defaultSpillDir is where spill directories go when Options.SpillDir is
// not set: switchboard-spill-UID in the system's temporary directory,
// which other users may write to. If that name is taken by a directory
// that is not the user's alone (another user made it first, or its mode
// is looser than 0700: privfile.CheckPrivate), a fresh private directory
// is made beside it for this engine alone, and removed by Close.
func (e *Engine) defaultSpillDir() string {
	dir := privfile.TempDir("switchboard-spill")
	err := privfile.MkdirAll(dir)
	if err == nil {
		if err = privfile.CheckPrivate(dir); err != nil {
			err = fmt.Errorf("refusing %s: %w", dir, err)
		}
	}
	if err == nil {
		return dir
	}
	fresh, ferr := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+"-")
	if ferr != nil {
		e.log.Warn("spill directory", "err", err)
		return dir // spills fail, saying why
	}
	e.log.Warn("spill directory: using a fresh one of this process's own", "dir", fresh, "err", err)
	e.freshSpill = fresh
	return fresh
}

// Tool returns the proxy tool's definition. The description names the
// configured servers and is byte-stable for a given configuration and
// catalog.
func (e *Engine) Tool(ctx context.Context) proxy.Tool {
	return proxy.Tool{Name: proxy.ToolName, Description: e.description(ctx), InputSchema: json.RawMessage(proxy.Schema)}
}

// Handle carries out one call of the proxy tool with its raw JSON arguments
// and returns what the model sees. Invalid arguments are an error result
// that connects nothing.
func (e *Engine) Handle(ctx context.Context, args json.RawMessage) *proxy.Result {
	return e.def.Handle(ctx, args)
}

// RunScript runs a code-mode script in the engine's own session.
func (e *Engine) RunScript(ctx context.Context, src string) *proxy.Result {
	return e.def.RunScript(ctx, src)
}

// Do carries out a parsed request in the engine's own session.
func (e *Engine) Do(ctx context.Context, req *proxy.Request) *proxy.Result {
	return e.def.Do(ctx, req)
}
