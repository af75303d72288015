package main

// Progress of a call: a server that sends progress notifications for a
// call (notifications/progress, which switchboard asks for, through
// switchboard.WithProgress, when stderr is a terminal) shows them on stderr as
// one line, rewritten in place ("get-sum: 3/5 60% copying…") and erased
// before the result prints. Nothing is asked for, and nothing shown, when
// stderr is a pipe or a file. Ctrl-C cancels the command's context, and
// go-sdk then sends notifications/cancelled for the call in flight.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard"
)

// callProgress is the live line of one call's progress.
type callProgress struct {
	what string

	mu   sync.Mutex
	line liveLine
	done bool // the call ended: a late notification shows nothing
}

// newCallProgress returns the progress line of a call of what, or nil
// when stderr is not a terminal.
func (e *env) newCallProgress(what string) *callProgress {
	if !isTerminal(e.stderr) {
		return nil
	}
	return &callProgress{line: liveLine{w: e.stderr, plain: !colorOK(e.getenv, escapes(e.stderr))}, what: what}
}

// watch returns a context whose call shows its progress on the line.
func (p *callProgress) watch(ctx context.Context) context.Context {
	if p == nil {
		return ctx
	}
	return switchboard.WithProgress(ctx, func(pr *mcp.ProgressNotificationParams) { p.show(progressText(p.what, pr)) })
}

// progressText is the line for one notification: done/total and percent
// when the server gives a total, the count alone otherwise, and the
// server's message.
func progressText(what string, pr *mcp.ProgressNotificationParams) string {
	line := what + ": "
	switch {
	case pr.Total > 0:
		line += fmt.Sprintf("%s/%s %d%%", num(pr.Progress), num(pr.Total), int(100*pr.Progress/pr.Total))
	default:
		line += num(pr.Progress)
	}
	// The message is the server's: no control character of it reaches the
	// terminal.
	msg := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, pr.Message)
	if msg = strings.Join(strings.Fields(msg), " "); msg != "" {
		line += " " + msg
	}
	return line
}

func num(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprint(int64(f))
	}
	return fmt.Sprintf("%.1f", f)
}

func (p *callProgress) show(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.line.show(line)
	}
}

// clear erases the line, before the result prints, for good: go-sdk may
// hand over a result before a notification sent just ahead of it.
func (p *callProgress) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	p.line.clear()
}
