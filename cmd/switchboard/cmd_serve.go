package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/cmd/switchboard/internal/logfile"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/front"
	"github.com/switchboard-mcp/switchboard/internal/exepages"
	"github.com/switchboard-mcp/switchboard/internal/privfile"
	"github.com/switchboard-mcp/switchboard/internal/replicas"
	"github.com/switchboard-mcp/switchboard/oauth"
	"github.com/switchboard-mcp/switchboard/telemetry"
)

func serveCommand() *command {
	return &command{
		name:    "serve",
		summary: "serve all configured servers as one MCP server (stdio or HTTP)",
		usage:   "[--http ADDR [--token-file FILE] [--stateless] [--admin] [--drain DURATION] [--advertise URL]] [--log-file FILE] [--log-level LEVEL]",
		help: `Serves the mcp proxy tool (and any direct tools) over stdio, for an agent to
start as a subprocess, or over Streamable HTTP at http://ADDR/mcp with --http.

HTTP listens on loopback unless told otherwise; any other address needs a
bearer token of at least 16 bytes from --token-file or $SWITCHBOARD_TOKEN
(make one with: openssl rand -hex 32). Host and Origin headers
are checked, request bodies are bounded, /healthz answers ok, /readyz
answers ready (503 while draining or when the store is unreachable),
/metrics serves Prometheus metrics, and /admin/status and /admin/calls show
its servers and recent calls to switchboard panel --attach (on loopback;
off loopback only with --admin). SIGINT or SIGTERM shut down gracefully:
over HTTP the gateway drains (takes no new requests, lets the calls in
flight finish for up to --drain, 25s, then cancels the rest), then
upstream servers are closed and spill files removed.

Replicas that share a store (settings.store) register in it with the URL
the others reach them at (--advertise, else $SWITCHBOARD_ADVERTISE_URL,
else the listen address unless it is a wildcard), so that a multi
round-trip call's continuation that reaches another replica is forwarded
to the one holding the call (docs/serve.md, Replicas).

Logs go to stderr (warnings only over stdio, where stdout is the protocol),
or to --log-file; and always, at info, with each stdio server's stderr, to
serve.log in the state directory (see: switchboard logs).

Examples:
  switchboard serve
  switchboard serve --http 127.0.0.1:8080
  switchboard serve --http 0.0.0.0:8080 --token-file ~/.config/switchboard/token`,
		run: runServe,
	}
}

type serveOptions struct {
	http, tokenFile, logFile, logLevel, config, advertise string
	stateless, admin, offline                             bool
	drain                                                 time.Duration
}

func runServe(ctx context.Context, e *env, args []string) error {
	f := newFlags("serve", false)
	var o serveOptions
	f.StringVar(&o.http, "http", "", "serve Streamable HTTP at `ADDR` (HOST:PORT) instead of stdio")
	f.StringVar(&o.tokenFile, "token-file", "", "read the bearer token from `FILE` (else $SWITCHBOARD_TOKEN)")
	f.BoolVar(&o.stateless, "stateless", false, "HTTP without sessions, for replicas behind a load balancer")
	f.BoolVar(&o.admin, "admin", false, "serve the admin endpoint off loopback too (it always needs the token there)")
	f.StringVar(&o.logFile, "log-file", "", "write logs to `FILE` instead of stderr")
	f.StringVar(&o.logLevel, "log-level", "", "debug, info, warn or error (default warn on stdio, info on HTTP)")
	f.DurationVar(&o.drain, "drain", defaultDrain, "on SIGTERM, let calls in flight finish for up to `DURATION` (HTTP)")
	f.StringVar(&o.advertise, "advertise", "", "the `URL` other replicas reach this one at (else $SWITCHBOARD_ADVERTISE_URL)")
	f.BoolVar(&o.offline, "offline", false, "start no server that needs the network or may download what it runs (docs/policy.md)")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("serve takes no arguments")
	}
	o.config = f.config
	if o.stateless && o.http == "" {
		return usagef("--stateless needs --http")
	}
	if o.admin && o.http == "" {
		return usagef("--admin needs --http")
	}
	if o.drain < 0 {
		return usagef("--drain must not be negative")
	}
	return e.serve(ctx, o)
}

func (e *env) serve(ctx context.Context, o serveOptions) error {
	defer serveMemoryTuning(e.getenv).apply()()
	token, err := e.serveToken(o)
	if err != nil {
		return err
	}
	d := e.dirs(o.config)
	d.Self.Addr = o.http // an imported entry for this address is this gateway
	cfg := config.Load(d)
	// With settings.identity, each request carries a user's access token
	// in place of the shared one (front.HTTPOptions.Identity).
	if o.http != "" && cfg.Settings.Identity == nil {
		if err := front.CheckListen(o.http, token); err != nil {
			return err
		}
	}
	log, err := e.serveLogger(o, d)
	if err != nil {
		return err
	}
	defer log.close()
	logger := log.Logger
	logger.Info("starting", "pid", os.Getpid(), "version", versionString())
	if o.offline {
		cfg.GoOffline()
	}
	e.outputGuard(cfg)
	for _, p := range cfg.Problems {
		logger.Warn("configuration", "problem", p.Error())
	}
	if o.http != "" {
		warnClientRoots(logger, cfg)
	}
	tracer, stopTraces, err := telemetry.Open(ctx, telemetry.Config{Endpoint: cfg.Settings.Telemetry.Endpoint, Getenv: e.getenv, Version: versionString()})
	if err != nil {
		logger.Warn("traces are off", "err", err)
	}
	defer stopTraces() // after the server (and its engine) has closed: its last spans are sent
	// The state: the credential store, and with settings.store the shared
	// database (st.db(), st.ready for readiness). run closes it after the
	// server, when the command returns.
	st, err := e.openState(ctx, cfg)
	if err != nil {
		return err
	}
	db := st.db() // nil without settings.store
	replica := front.NewReplicaID()
	metrics := front.NewMetrics()
	calls := switchboard.NewCallLog(0)
	pages := newQuietPages()
	pagesCtx, stopPages := context.WithCancel(ctx)
	defer stopPages()
	go pages.run(pagesCtx, pagesQuiet, pagesIdle, func() { _, _ = exepages.Release() })
	// Over stdio the engine's connections serve one client, whose roots
	// go to the servers that accept them (roots: ["client"]); over HTTP
	// clients share them, and no one client's roots are forwarded
	// (docs/serve.md, Roots).
	fopts := &front.Options{Logger: logger, Version: versionString(), Metrics: metrics, ForwardRoots: o.http == "", ReplicaID: replica, Changed: pages.oneOff,
		Engine: switchboard.Options{Lookup: e.lookupEnv, Logger: logger, Version: versionString(),
			Supervise: true, Prompt: e.servePrompter(), Telemetry: tracer, Stderr: log.stderr, OnCall: pages.onCall(calls.Add)}}
	st.engine(&fopts.Engine)
	if st.shared != nil {
		logger.Info("shared store", "store", st.describe())
	}
	srv, err := front.New(ctx, cfg, fopts)
	if err != nil {
		return err
	}
	defer srv.Close()
	if o.http == "" {
		releaseStartupPages(logger)
		// front's stdio transport refuses a message go-sdk cannot take
		// (too deep, too large, not JSON) alone, where go-sdk's would end
		// the session, and serve with it.
		err := srv.MCP().Run(ctx, &front.StdioTransport{Logger: logger, Server: srv})
		if ctx.Err() != nil {
			return nil // a signal: a clean stop
		}
		return err
	}
	ln, err := net.Listen("tcp", o.http)
	if err != nil {
		return err
	}
	defer ln.Close()
	hopts := front.HTTPOptions{Token: token, Stateless: o.stateless, Metrics: metrics}
	if id := cfg.Settings.Identity; id != nil {
		hopts.Identity = id
		logger.Info("identity", "issuer", id.Issuer, "audience", id.Audience, "rules", id.Rules != nil)
	}
	if o.admin || front.AdminByDefault(o.http) {
		hopts.Admin = &front.Admin{Calls: calls, Version: versionString(), Started: time.Now()}
	}
	if db != nil {
		advertise, err := e.advertiseURL(o.advertise, ln.Addr())
		if err != nil {
			return err
		}
		if advertise == "" {
			logger.Warn("this replica is not registered: it listens on every interface, so give --advertise URL (or $SWITCHBOARD_ADVERTISE_URL); other replicas cannot forward continuations to it")
		}
		reg, err := replicas.Open(ctx, db, replica, advertise, st.shared.Key)
		if err != nil {
			return fmt.Errorf("the replica registry in the shared store: %w", err)
		}
		defer reg.Close() // after the drain: continuations reach this replica until then
		hopts.Registry, hopts.StoreKey = reg, st.shared.Key
		hopts.Ready = storeReady(db)
		logger.Info("replica", "id", replica, "advertise", advertise)
	}
	h, err := srv.Handler(hopts)
	if err != nil {
		return err
	}
	h = pages.handler(h)
	if gc := laneGC(e.getenv); gc != 0 && srv.LeanCalls() {
		debug.SetGCPercent(gc) // serve's memory tuning, applied above, undoes it
	}
	releaseStartupPages(logger) // before it says it serves: tests look at its memory then
	logger.Info("serving", "url", "http://"+ln.Addr().String()+"/mcp")
	log.flush() // the lines above come before this one
	fmt.Fprintf(e.stderr, "switchboard: serving http://%s/mcp\n", ln.Addr())
	if e.stopGrace != nil {
		e.stopGrace.Store(int64(o.drain)) // a draining serve needs its drain on top of the time to close
	}
	return srv.Serve(ctx, ln, h, o.drain)
}

// warnClientRoots says, over HTTP, that a server's roots: ["client"] has
// no effect there.
func warnClientRoots(logger *slog.Logger, cfg *config.Config) {
	for _, s := range cfg.Servers {
		if s.Roots != nil && s.Roots.Client && !s.Disabled {
			logger.Warn(`roots: "client" forwards nothing over HTTP, where clients share the connections to servers: the server is offered only the directories its roots list (docs/serve.md, Roots)`, "server", s.Name)
		}
	}
}

// servePrompter is how serve lets a server that needs an OAuth login log
// in when the client cannot open the URL itself (front.Options.Engine):
// through the browser $BROWSER names, when it is set. Otherwise the result
// says needs-auth and names the command.
func (e *env) servePrompter() oauth.Prompter {
	if e.getenv("BROWSER") == "" {
		return nil
	}
	return e.browserPrompter(false)
}

// maxTokenFile bounds a token file: a token is some dozens of bytes.
const maxTokenFile = 4 << 10

// serveToken returns the bearer token of --token-file, else of
// $SWITCHBOARD_TOKEN. The file must be a regular file of the user's, that
// no one else may read or change (on Unix; on Windows its access-control
// list is not checked), of at most maxTokenFile bytes: a FIFO or a device
// would block or never end, and a token others can read is no secret.
func (e *env) serveToken(o serveOptions) (string, error) {
	if o.tokenFile == "" {
		return strings.TrimSpace(e.getenv("SWITCHBOARD_TOKEN")), nil
	}
	data, err := privfile.ReadPrivate(o.tokenFile, maxTokenFile)
	switch {
	case errors.Is(err, privfile.ErrNotPrivate):
		return "", fmt.Errorf("reading the token file %s: %w: the token is no secret there (hint: as its owner, chmod 600 %s)", o.tokenFile, err, o.tokenFile)
	case err != nil:
		return "", fmt.Errorf("reading the token file %s: %w (hint: write the token to a regular file of your own, mode 600, and name that)", o.tokenFile, err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", fmt.Errorf("the token file %s is empty", o.tokenFile)
	}
	return token, nil
}

// serveLog is where serve logs: stderr or --log-file at the chosen level,
// and always the log file in the state directory (logfile) at info or
// below, which also gets each stdio server's stderr lines. Every line
// names this serve process's session.
type serveLog struct {
	*slog.Logger
	file    *slog.Logger // the state directory's file alone; nil if it could not be opened
	session string
	main    *logfile.Behind // stderr or --log-file
	closers []func()
}

// flush waits until the lines logged so far are on stderr (or in
// --log-file).
func (l *serveLog) flush() { _ = l.main.Flush() }

func (l *serveLog) close() {
	for i := len(l.closers) - 1; i >= 0; i-- {
		l.closers[i]()
	}
}

// stderr writes a line a server wrote to stderr to the log file.
func (l *serveLog) stderr(server, line string) {
	if l.file != nil {
		l.file.Info("stderr", "server", server, "line", line)
	}
}

// serveLogPath is the log file in the state directory.
func serveLogPath(d config.Dirs) string { return filepath.Join(d.StateDir(), "serve.log") }

func (e *env) serveLogger(o serveOptions, d config.Dirs) (*serveLog, error) {
	level := slog.LevelWarn
	if o.http != "" {
		level = slog.LevelInfo
	}
	if o.logLevel != "" {
		if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
			return nil, usagef("--log-level must be debug, info, warn or error")
		}
	}
	l := &serveLog{session: newSessionID()}
	var w io.Writer = e.stderr
	if o.logFile != "" {
		f, err := os.OpenFile(o.logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, fmt.Errorf("opening the log file: %w", err)
		}
		w = f
		l.closers = append(l.closers, func() { f.Close() })
	}
	// Both logs are written behind the calls that log (logfile.Behind),
	// and written through when serve ends (closers run in reverse).
	l.main = logfile.NewBehind(w, 0)
	l.closers = append(l.closers, func() { l.main.Close() })
	main := slog.NewTextHandler(l.main, &slog.HandlerOptions{Level: level})
	fw, err := logfile.Open(serveLogPath(d), 0)
	if err != nil {
		l.Logger = slog.New(main).With("session", l.session)
		l.Warn("logging to the state directory", "err", err)
		return l, nil
	}
	bfw := logfile.NewBehind(fw, 0)
	l.closers = append(l.closers, func() { fw.Close() }, func() { bfw.Close() })
	file := slog.NewTextHandler(bfw, &slog.HandlerOptions{Level: min(level, slog.LevelInfo)})
	l.file = slog.New(file).With("session", l.session)
	l.Logger = slog.New(slog.NewMultiHandler(main, file)).With("session", l.session)
	return l, nil
}

// newSessionID names one serve process in the log: several may write to
// the same file (each agent host starts its own).
func newSessionID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
