// Package panel is switchboard panel: a terminal view of the servers, their
// tools and the recent calls of an engine in this process, or of a running
// gateway's admin endpoint (read-only but for reconnecting a server and
// deciding approvals), built on bubbletea.
//
// Screens, reached with tab or 1-5:
//   - servers: name, transport, state, tool count, last call and source
//     file, with the selected server's last error; connect, reconnect,
//     enable or disable (in Switchboard's own file, as the commands do),
//     log in, index;
//   - tools: a server's tools, or a live search across every server (the
//     mcp tool's search), a tool's description and input schema, and a
//     form built from that schema that calls it, the result shown bounded
//     with the path of any spill file;
//   - calls: the recent calls (server, tool, time, duration, outcome,
//     sizes; never arguments);
//   - problems: the configuration's errors and warnings at file:line:col;
//   - approvals, attached only: the calls waiting for an approver group
//     that the token may decide (server, tool, requester, rule, how long
//     it waited, the selected one's arguments), allowed with a and denied
//     with d, each confirmed with y; their count is in the title line.
//
// It is driven by the keyboard only, with a help line at the bottom. It
// shows what switchboard status and the mcp tool show, so never a secret;
// attached, the arguments of a waiting call, which its approver decides
// on, as switchboard approvals --json shows them.
package panel

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Options tune the panel. The zero value works.
type Options struct {
	// Palette styles the screen. Default: plain text.
	Palette Palette
	// Now is the clock that ages are shown against. Default: time.Now.
	Now func() time.Time
	// Home is the user's home directory, shown as ~ in file names.
	Home string
	// Refresh is how often status and calls are read again. Default 2s;
	// negative: only after an action.
	Refresh time.Duration
	// Timeout bounds each operation the panel starts (a connect, a call,
	// an index). Default 5 minutes: a server's own request timeout is
	// usually what ends a call.
	Timeout time.Duration
}

// New returns the panel's model over b, for tea.NewProgram. ctx ends the
// operations it starts.
func New(ctx context.Context, b Backend, opts Options) *Model {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Refresh == 0 {
		opts.Refresh = 2 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	return newModel(ctx, b, opts)
}

// Run shows the panel on the terminal until the user quits or ctx ends.
func Run(ctx context.Context, b Backend, opts Options, progOpts ...tea.ProgramOption) error {
	m := New(ctx, b, opts)
	p := tea.NewProgram(m, append([]tea.ProgramOption{tea.WithContext(ctx), tea.WithColorProfile(opts.Palette.profile())}, progOpts...)...)
	_, err := p.Run()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
