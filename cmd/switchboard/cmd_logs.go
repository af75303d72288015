package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/switchboard-mcp/switchboard/cmd/switchboard/internal/logfile"
)

func logsCommand() *command {
	return &command{
		name:    "logs",
		summary: "show what serve logged, and servers' stderr",
		usage:   "[-f] [--server NAME] [--since DURATION] [--json]",
		help: `Prints the log that every switchboard serve writes to serve.log in the state
directory ($XDG_STATE_HOME/switchboard, by default ~/.local/state/switchboard),
oldest line first, including the rotated files. Each line names the serve
process's session and, where there is one, the server. The log holds what
serve did (starts, calls with their server, tool, outcome and duration,
warnings) and every line each stdio server wrote to stderr; never a call's
arguments or results.

  -f               keep printing lines as serve writes them, until Ctrl-C
  --server NAME    only the lines about that server, its stderr included
  --since DURATION only the lines of the last DURATION (30s, 10m, 2h)
  --json           one JSON object a line: time, level, session, server,
                   stream ("serve", or "stderr" for a server's stderr),
                   message (serve's message, or the line the server wrote),
                   and fields (the line's other key=value pairs, as strings)

Examples:
  switchboard logs --since 1h
  switchboard logs -f --server github`,
		run: runLogs,
	}
}

// logsPoll is how often logs -f looks for new lines.
const logsPoll = 250 * time.Millisecond

func runLogs(ctx context.Context, e *env, args []string) error {
	f := newFlags("logs", true)
	var follow bool
	var filter logfile.Filter
	var since time.Duration
	f.BoolVar(&follow, "f", false, "keep printing lines as they are written")
	f.StringVar(&filter.Server, "server", "", "only the lines about server `NAME`")
	f.DurationVar(&since, "since", 0, "only the lines of the last `DURATION`")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("logs takes no arguments (did you mean --server %s?)", pos[0])
	}
	if since < 0 {
		return usagef("--since must be a positive duration such as 10m or 2h")
	}
	if since > 0 {
		filter.Since = time.Now().Add(-since)
	}
	path := serveLogPath(e.dirs(f.config))
	out := e.stdout
	if f.json {
		out = logfile.JSONLines(out)
	}
	err = logfile.Show(ctx, out, path, filter, follow, logsPoll)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no log yet: %s does not exist\nhint: switchboard serve writes it when an agent starts it; logs -f waits for it", e.pretty(path))
	}
	return err
}
