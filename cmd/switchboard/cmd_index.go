package main

// Output of index:
//   - stdout: one line per server as it finishes ("NAME  23 tools, 4
//     resources, 2 prompts  (812ms)", with "1 template, " before the
//     prompts when there are templates, or "NAME  failed: …"), then one
//     per catalog entry removed; with --json, one object at the end instead.
//   - stderr: on a terminal only, a live progress line, rewritten in place
//     and erased before each result line; plain (no escape sequences) under
//     NO_COLOR or TERM=dumb, or on a Windows console that takes none. On
//     stdout, "failed" is red on a terminal unless NO_COLOR is set (or
//     TERM=dumb, or the console takes no escape sequences).
//   - Exit 1 when any server (or its embeddings) failed; the rest are
//     indexed all the same.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/internal/panel"
)

func indexCommand() *command {
	return &command{
		name:    "index",
		summary: "(re)build the catalog of all or some servers",
		usage:   "[SERVER…] [--json] [--config FILE]",
		help: `Connects to each named server (every enabled one by default), lists its
tools, resources, templates, prompts and instructions, and stores them in the
catalog that search and describe answer from, even when the catalog already
has them. Up to 4 servers are indexed at once; one that fails does not stop
the others. With settings.embeddings, the texts of tools that have no
embedding yet are embedded too. Servers no longer configured are removed
from the catalog.

Prints a line per server as it finishes, and shows progress on a terminal.

With --json, prints {"servers": [{"server", "tools", "resources", "templates",
"prompts", "durationNs", "error", "embedded", "embeddingsError"}, …],
"removed": […]}.`,
		run: runIndexCommand,
	}
}

// indexOptions are the flags of index.
type indexOptions struct {
	config  string
	json    bool
	noLogin bool
}

// indexJSON is the stable --json shape of index.
type indexJSON struct {
	Servers []switchboard.IndexResult `json:"servers"`
	Removed []string                  `json:"removed"`
}

func runIndexCommand(ctx context.Context, e *env, args []string) error {
	f := newFlags("index", true)
	f.addNoLogin()
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	e.offline = e.offline || f.offline
	return runIndex(ctx, e, indexOptions{config: f.config, json: f.json, noLogin: f.noLogin}, pos)
}

func runIndex(ctx context.Context, e *env, opts indexOptions, names []string) (err error) {
	cfg, err := e.loadConfig(opts.config)
	if err != nil {
		return err
	}
	eng, err := e.newEngine(ctx, cfg, !opts.noLogin)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, eng.Close()) }()
	if len(names) == 0 {
		for _, s := range cfg.Servers {
			if !s.Disabled && s.Err == nil {
				names = append(names, s.Name)
			}
		}
	}
	width := 0
	for _, n := range names {
		width = max(width, utf8.RuneCountInString(n))
	}
	color := isTerminal(e.stdout) && colorOK(e.getenv, escapes(e.stdout))
	prog := &progress{line: liveLine{w: e.stderr, plain: !colorOK(e.getenv, escapes(e.stderr))}, total: len(names), on: isTerminal(e.stderr)}
	var results []switchboard.IndexResult
	if len(names) > 0 {
		results, err = eng.Index(ctx, names, &switchboard.IndexOptions{
			Started: prog.start,
			Done: func(r switchboard.IndexResult) {
				prog.finish(r.Server, func() {
					if !opts.json {
						fmt.Fprintln(e.stdout, indexLine(r, width, color))
					}
				})
			},
		})
		prog.clear()
		if err != nil {
			return err // an unknown server, or interrupted
		}
	}
	removed, err := eng.Prune(ctx)
	if err != nil {
		return err
	}
	if opts.json {
		out := indexJSON{Servers: results, Removed: removed}
		if out.Servers == nil {
			out.Servers = []switchboard.IndexResult{}
		}
		if out.Removed == nil {
			out.Removed = []string{}
		}
		if err := writeJSON(e.stdout, out); err != nil {
			return err
		}
	} else {
		for _, name := range removed {
			why := "no longer configured"
			if _, ok := cfg.Server(name); ok {
				why = "its definition changed"
			}
			fmt.Fprintf(e.stdout, "%-*s  removed from the catalog: %s\n", width, name, why)
		}
		if len(names) == 0 {
			fmt.Fprintln(e.stderr, "no servers to index (hint: switchboard add NAME -- COMMAND ARGS…)")
		}
	}
	return indexFailures(results)
}

// indexLine is a server's result line.
func indexLine(r switchboard.IndexResult, width int, color bool) string {
	took := fmt.Sprintf("(%.1fs)", r.Duration.Seconds())
	if r.Duration < time.Second {
		took = fmt.Sprintf("(%dms)", r.Duration.Milliseconds())
	}
	if r.Error != "" {
		failed := panel.NewPalette(color, color).Bad("failed")
		// Further lines of the error (a server's stderr) line up under it.
		msg := strings.ReplaceAll(strings.TrimSpace(r.Error), "\n", "\n"+strings.Repeat(" ", width+2)+"  ")
		return fmt.Sprintf("%-*s  %s: %s  %s", width, r.Server, failed, msg, took)
	}
	line := fmt.Sprintf("%-*s  %s, %s, ", width, r.Server, count(r.Tools, "tool", "tools"), count(r.Resources, "resource", "resources"))
	if r.Templates > 0 {
		line += count(r.Templates, "template", "templates") + ", "
	}
	line += count(r.Prompts, "prompt", "prompts")
	if r.Embedded > 0 {
		line += fmt.Sprintf(", %d embedded", r.Embedded)
	}
	line += "  " + took
	if r.EmbeddingsError != "" {
		failed := panel.NewPalette(color, color).Bad("embeddings failed")
		line += "; " + failed + ": " + strings.TrimPrefix(r.EmbeddingsError, "embedding tool texts: ")
	}
	return line
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// indexFailures summarises what failed, as the command's error.
func indexFailures(results []switchboard.IndexResult) error {
	var servers, embeddings int
	for _, r := range results {
		switch {
		case r.Error != "":
			servers++
		case r.EmbeddingsError != "":
			embeddings++
		}
	}
	var parts []string
	if servers > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d servers failed", servers, len(results)))
	}
	if embeddings > 0 {
		parts = append(parts, fmt.Sprintf("embeddings failed for %d of %d servers (search stays lexical until they are computed)", embeddings, len(results)))
	}
	if len(parts) == 0 {
		return nil
	}
	return errors.New(strings.Join(parts, "; "))
}

// progress is the live line of a long command on a terminal: "indexing
// 3/10: github, slack…", rewritten in place. When off, it prints nothing.
type progress struct {
	line liveLine
	on   bool // stderr is a terminal

	total, done int
	running     []string
}

func (p *progress) start(name string) {
	p.running = append(p.running, name)
	p.draw()
}

// finish marks name done, printing its result line with the progress line
// out of the way.
func (p *progress) finish(name string, print func()) {
	for i, n := range p.running {
		if n == name {
			p.running = append(p.running[:i], p.running[i+1:]...)
			break
		}
	}
	p.done++
	p.clear()
	print()
	p.draw()
}

func (p *progress) draw() {
	if !p.on {
		return
	}
	if len(p.running) == 0 {
		p.clear()
		return
	}
	p.line.show(fmt.Sprintf("indexing %d/%d: %s…", p.done, p.total, strings.Join(p.running, ", ")))
}

func (p *progress) clear() {
	if p.on {
		p.line.clear()
	}
}
