package main

// Output of panel: the terminal UI on stdout, which must be a terminal, as
// must stdin; nothing else is printed while it runs. Under NO_COLOR it
// uses no colour (bold, faint and reverse still mark the selection and
// failures); under TERM=dumb, which takes no cursor movement, it refuses
// to start and names the commands that print the same.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"

	tea "charm.land/bubbletea/v2"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/panel"
)

func panelCommand() *command {
	return &command{
		name:    "panel",
		summary: "see and steer servers, tools and calls in a terminal UI",
		usage:   "[--attach URL [--token-file FILE]] [--config FILE]",
		help: `Opens a full-screen view of every server (state, tool count, last call,
source file, last error), their tools with a live search across every
server, a tool's description and schema, a form that calls it, the recent
calls, and the configuration's problems at file:line:col.

Keys: tab or 1-4 (1-5 attached) switch screens; ↑↓ select; on servers, enter lists the
server's tools, c connects, r reconnects, e enables or disables it (in
Switchboard's own file, as enable and disable do), l logs in, i indexes;
on tools, / searches, enter describes, enter again opens the call form;
q quits (ctrl+c anywhere). The help line shows the keys of each screen.

With --attach URL, shows a running switchboard serve --http instead,
through its admin endpoint: status and recent calls, read-only, a
reconnect action, and a fifth screen of the calls waiting for an
approver group you are in, which a allows and d denies (y confirms). The bearer token comes from --token-file (a file of
yours, mode 600) or $SWITCHBOARD_TOKEN; it is sent over http:// only to
loopback: use https://, or an SSH tunnel, to reach another machine.

Examples:
  switchboard panel
  switchboard panel --attach http://127.0.0.1:8080`,
		run: runPanel,
	}
}

func runPanel(ctx context.Context, e *env, args []string) error {
	f := newFlags("panel", false)
	attach := f.String("attach", "", "show the gateway at `URL` (switchboard serve --http) instead")
	tokenFile := f.String("token-file", "", "with --attach, read the gateway's bearer token from `FILE` (else $SWITCHBOARD_TOKEN)")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("panel takes no arguments")
	}
	if *tokenFile != "" && *attach == "" {
		return usagef("--token-file needs --attach")
	}
	// What --attach is given is checked before the screen is needed.
	var remote *panel.Remote
	if *attach != "" {
		token, err := e.serveToken(serveOptions{tokenFile: *tokenFile})
		if err != nil {
			return err
		}
		if remote, err = panel.NewRemote(*attach, token); err != nil {
			return usagef("%v", err)
		}
		if err := checkCleartext(*attach, token); err != nil {
			return err
		}
	}
	if err := e.panelTerminal(); err != nil {
		return err
	}
	opts := panel.Options{
		Palette: panel.NewPalette(e.getenv("NO_COLOR") == "", true),
		Home:    config.HomeDir(e.goos, e.getenv),
	}
	if remote != nil {
		if _, err := remote.Status(ctx); err != nil {
			return err // a wrong URL or token is said before the screen clears
		}
		return e.runPanelUI(ctx, remote, opts)
	}
	local, err := e.panelLocal(ctx, f.config)
	if err != nil {
		return err
	}
	defer func() { local.Current().Close() }()
	return e.runPanelUI(ctx, local, opts)
}

// checkCleartext refuses to send token over plain http to a host off
// loopback: anyone on the path would read it, and with it reach every
// server the gateway serves. On loopback, http stays allowed: the token
// does not leave the machine.
func checkCleartext(rawURL, token string) error {
	u, err := url.Parse(rawURL)
	if err != nil || token == "" || u.Scheme != "http" {
		return nil
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return fmt.Errorf("refusing to send the bearer token in clear to %s: over http:// anyone on the way can read it (hint: use https://, or an SSH tunnel: ssh -L 8080:127.0.0.1:PORT %s, then --attach http://127.0.0.1:8080)", u.Host, host)
}

// panelTerminal checks that the panel can be shown: stdin and stdout are
// a terminal that takes escape sequences.
func (e *env) panelTerminal() error {
	in, ok := e.stdin.(*os.File)
	switch {
	case !isTerminal(e.stdout) || !ok || !isConsole(in):
		return errors.New("panel needs a terminal on standard input and output (hint: switchboard status, search and call print the same)")
	case e.getenv("TERM") == "dumb" || !escapes(e.stdout):
		return errors.New("panel needs a terminal that moves the cursor, and TERM=dumb says this one does not (hint: switchboard status, search and call print the same)")
	}
	return nil
}

func (e *env) runPanelUI(ctx context.Context, b panel.Backend, opts panel.Options) error {
	err := panel.Run(ctx, b, opts, tea.WithInput(e.stdin), tea.WithOutput(e.stdout))
	if errors.Is(err, context.Canceled) || errors.Is(err, tea.ErrProgramKilled) {
		return ctx.Err()
	}
	return err
}

// panelLocal makes the panel's engine, through the library as a Go host
// would: one that opens even when the configuration failed closed (the
// panel shows why), logs nothing to the screen it draws on, and keeps the
// recent calls.
func (e *env) panelLocal(ctx context.Context, explicit string) (*panel.Local, error) {
	calls := switchboard.NewCallLog(0)
	d := e.dirs(explicit)
	open := func(ctx context.Context) (*switchboard.Engine, *config.Config, error) {
		cfg := config.Load(d)
		e.outputGuard(cfg)
		o, err := e.engineOptions(ctx, cfg, nil)
		if err != nil {
			return nil, cfg, err
		}
		o.Logger = nil
		o.OnCall = calls.Add
		o.Supervise = true // it runs until it is stopped, as serve does
		eng, err := switchboard.New(ctx, cfg, o)
		return eng, cfg, err
	}
	eng, cfg, err := open(ctx)
	if err != nil {
		return nil, err
	}
	l := &panel.Local{Engine: eng, Config: cfg, Log: calls, Dirs: d, Reload: open}
	if e.canOpenBrowser() {
		// As switchboard auth login does, in an engine of its own; the
		// panel's engine reads the new tokens from the store when it
		// connects again.
		l.Login = func(ctx context.Context, server string) error {
			eng, err := e.openEngine(ctx, explicit, false)
			if err != nil {
				return err
			}
			defer eng.Close()
			return eng.Login(ctx, server, func(ctx context.Context, server, authURL string) (string, error) {
				if err := e.openBrowser(ctx, authURL); err != nil {
					return "", fmt.Errorf("%v; hint: switchboard auth login %s --no-browser", err, server)
				}
				return "", nil
			})
		}
	}
	return l, nil
}
