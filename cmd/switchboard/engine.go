package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/oauth"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// spillKeep is how long the CLI's spill files stay: a command prints "the
// whole text is in FILE" and exits, so the file must outlive it. A later
// command removes spill directories nothing was written to for this long.
const spillKeep = 24 * time.Hour

// spillDir is where the CLI's spill files go: the user's cache directory,
// not the temporary one, since they outlive the command.
func spillDir(d config.Dirs) string { return filepath.Join(d.CacheDir(), "spill") }

// catalogPath is the catalog's file, which completion reads without an
// engine.
func catalogPath(d config.Dirs) string { return filepath.Join(d.CacheDir(), "catalog.db") }

// openEngine loads the configuration and makes an engine over it. A
// configuration that failed closed is an error here: these commands need
// a server. With login, a server that needs an OAuth login logs in there
// and then when a browser can be opened (see canOpenBrowser); otherwise
// its error names the command that logs in.
func (e *env) openEngine(ctx context.Context, explicit string, login bool) (*switchboard.Engine, error) {
	cfg, err := e.loadConfig(explicit)
	if err != nil {
		return nil, err
	}
	return e.newEngine(ctx, cfg, login)
}

// loadConfig loads the configuration for a command that needs a server:
// one that failed closed is an error. With --offline, it is made offline.
func (e *env) loadConfig(explicit string) (*config.Config, error) {
	cfg := config.Load(e.dirs(explicit))
	if err := cfg.Err(); err != nil {
		return nil, fmt.Errorf("%w\nhint: switchboard config validate shows every problem", err)
	}
	if e.offline {
		cfg.GoOffline()
	}
	e.outputGuard(cfg)
	return cfg, nil
}

// outputGuard turns the output bound off when the environment says so:
// SWITCHBOARD_OUTPUT_GUARD=0, or MCP_OUTPUT_GUARD=0 as pi-mcp-adapter
// reads it, for a host that bounds what reaches its model itself (as
// "output": false in the settings does).
func (e *env) outputGuard(cfg *config.Config) {
	for _, name := range []string{"SWITCHBOARD_OUTPUT_GUARD", "MCP_OUTPUT_GUARD"} {
		switch strings.ToLower(strings.TrimSpace(e.getenv(name))) {
		case "0", "false", "off":
			cfg.Settings.Output.Unbounded = true
		}
	}
}

// newEngine makes the CLI's engine over cfg, through the library as a Go
// host would (see openEngine for login).
func (e *env) newEngine(ctx context.Context, cfg *config.Config, login bool) (*switchboard.Engine, error) {
	var prompt oauth.Prompter
	if login && e.canOpenBrowser() {
		prompt = e.browserPrompter(false)
	}
	opts, err := e.engineOptions(ctx, cfg, prompt)
	if err != nil {
		return nil, err
	}
	return switchboard.New(ctx, cfg, opts)
}

// engineOptions are the CLI's engine options over cfg, its state (the
// credential store, and settings.store's database) opened with them.
//
// They start stdio servers without a supervisor: a command that does one
// thing and exits keeps the library's promise (the server dies with it, by
// PR_SET_PDEATHSIG; what the server started sees its stdin close, and the
// next switchboard to start ends the group), not serve's, which a
// supervisor, a second start of this binary, would cost every call
// (docs/serve.md, Processes). What runs until it is stopped, serve and the
// panel, sets Supervise.
func (e *env) engineOptions(ctx context.Context, cfg *config.Config, prompt oauth.Prompter) (*switchboard.Options, error) {
	st, err := e.openState(ctx, cfg)
	if err != nil {
		return nil, err
	}
	o := &switchboard.Options{
		Prompt:      prompt,
		Lookup:      e.lookupEnv,
		Logger:      slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelError})),
		Version:     versionString(),
		CatalogPath: catalogPath(cfg.Dirs),
		SpillDir:    spillDir(cfg.Dirs),
		KeepSpills:  spillKeep,
		Audience:    proxy.People,
		// No Roots: the CLI and the panel have no client whose roots they
		// could forward, and the working directory is not one. A server
		// is offered the directories its configuration lists, no more
		// (config.Roots, docs/configuration.md).
	}
	// A stdio server the command names starts while the engine opens the
	// catalog. Not a remote one: connecting may ask the user to log in,
	// which a command that then fails on its arguments should not do; nor
	// one that offline mode refuses.
	pre := e.preconnect
	if pre == "" && e.preconnectTool != "" {
		pre = serverOfTool(cfg, e.preconnectTool)
	}
	if s, ok := cfg.Server(pre); ok && s.Type == config.TransportStdio && s.Offline == "" {
		o.Preconnect = []string{s.Name}
	}
	st.engine(o)
	return o, nil
}

// serverOfTool returns the server a tool's name, as a call names it,
// most likely is on, to start before the catalog says so: the server whose
// name and "_" begin it (the longest such name), or the only server
// enabled. "" when the name says nothing of it; the call then resolves
// the name as always, and a wrong guess only starts a server early.
func serverOfTool(cfg *config.Config, tool string) string {
	best, only, enabled := "", "", 0
	for _, s := range cfg.Servers {
		if s.Disabled {
			continue
		}
		enabled++
		only = s.Name
		if strings.HasPrefix(tool, s.Name+"_") && len(s.Name) > len(best) {
			best = s.Name
		}
	}
	if best == "" && enabled == 1 {
		best = only
	}
	return best
}

// answered is what a build returns to end its command with a result of
// its own, printed as the request's would be.
type answered struct{ r *proxy.Result }

func (a *answered) Error() string { return a.r.Text }

// runRequest opens an engine, carries out one request and prints its
// result: the text on stdout, or the details with --json. An error result
// goes to stderr and fails the command; so does a tool's own error.
func (e *env) runRequest(ctx context.Context, f *flags, req *proxy.Request) error {
	if req.Action != proxy.ActionReconnect && req.Action != proxy.ActionStatus {
		e.preconnect = req.Server
	}
	return e.runBuilt(ctx, f, func(context.Context, *switchboard.Engine) (*proxy.Request, error) { return req, nil })
}

// runBuilt is runRequest for a request that is built with the engine's
// help, such as a call whose arguments are typed by the tool's schema.
func (e *env) runBuilt(ctx context.Context, f *flags, build func(context.Context, *switchboard.Engine) (*proxy.Request, error)) (err error) {
	return e.runBuiltWith(ctx, f, nil, build)
}

// runBuiltWith is runBuilt that shows a call's progress on prog's line
// (nil: none).
func (e *env) runBuiltWith(ctx context.Context, f *flags, prog *callProgress, build func(context.Context, *switchboard.Engine) (*proxy.Request, error)) (err error) {
	e.offline = e.offline || f.offline
	ctx = prog.watch(ctx)
	cfg, err := e.loadConfig(f.config)
	if err != nil {
		return err
	}
	if len(cfg.Servers) == 0 {
		// A first run: say where the user's servers are, before the answer
		// about none.
		printOtherHosts(e.stderr, cfg)
	}
	eng, err := e.newEngine(ctx, cfg, !f.noLogin)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, eng.Close()) }()
	req, err := build(ctx, eng)
	var a *answered
	if errors.As(err, &a) {
		prog.clear()
		return e.printResult(a.r, f.json)
	}
	if err != nil {
		return err
	}
	r := eng.Do(ctx, req)
	prog.clear()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return e.printResult(r, f.json)
}

func (e *env) printResult(r *proxy.Result, asJSON bool) error {
	switch {
	case asJSON:
		e.stdout.Write(r.JSON())
	case r.IsError:
		fmt.Fprintln(e.stderr, r.Text)
	default:
		fmt.Fprintln(e.stdout, strings.TrimSuffix(r.Text, "\n")) // a text that ends its line is printed as it is
		for _, img := range r.Images {
			fmt.Fprintf(e.stderr, "(an image of %d bytes is attached; use --json or the MCP tool to get it)\n", len(img.Data))
		}
	}
	if r.IsError {
		return errSilent
	}
	return nil
}
