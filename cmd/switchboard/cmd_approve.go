package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/policy"
)

func approveCommand() *command {
	return &command{
		name: "approve", summary: "accept the changed definition of a quarantined tool",
		usage: "SERVER [TOOL] [--json]",
		help: `A tool whose definition (description, schemas, annotations, _meta,
icons) changed since it was approved is quarantined: not callable, and
shown everywhere as it was approved, marked [changed]; under pin
"strict", a tool new on a known server is quarantined too, and shown by
its name alone (docs/policy.md). With SERVER alone, lists that server's
quarantined tools and what each offers now. With TOOL, accepts the
definition shown there (the one in the catalog, which describe shows too)
and prints what changed: the tool is callable again, and shown as it is
now. The acceptance is recorded in the audit trail.`,
		run: runApprove,
	}
}

func runApprove(ctx context.Context, e *env, args []string) error {
	f := newFlags("approve", true)
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usagef("approve needs SERVER, and TOOL to accept its changed definition")
	}
	eng, err := e.openEngine(ctx, f.config, false)
	if err != nil {
		return err
	}
	defer eng.Close()
	qs, err := eng.Quarantined(ctx, pos[0])
	if err != nil {
		return err
	}
	for _, q := range qs {
		if q.Err != nil { // the pins cannot be read: nothing can be listed or accepted
			return q.Err
		}
	}
	if len(pos) == 1 {
		if f.json {
			return writeJSON(e.stdout, quarantineJSON(qs))
		}
		for _, q := range qs {
			fmt.Fprintf(e.stdout, "%s (quarantined since %s)\n", q.Tool, q.Since.UTC().Format("2006-01-02 15:04:05Z"))
			for _, l := range q.Diff(60) {
				fmt.Fprintln(e.stdout, "  "+l)
			}
		}
		fmt.Fprintf(e.stderr, "%d quarantined %s on %q\n", len(qs), plural(len(qs), "tool"), pos[0])
		return nil
	}
	q, err := eng.Approve(ctx, pos[0], pos[1])
	if errors.Is(err, switchboard.ErrNotQuarantined) {
		names := make([]string, len(qs))
		for i, q := range qs {
			names[i] = q.Tool
		}
		if len(names) > 0 {
			return fmt.Errorf("%w; quarantined on %q: %s", err, pos[0], strings.Join(names, ", "))
		}
	}
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(e.stdout, quarantineJSON(nil)) // nothing left of it
	}
	for _, l := range q.Diff(60) {
		fmt.Fprintln(e.stdout, l)
	}
	fmt.Fprintf(e.stderr, "accepted the new definition of %q on %q: it is callable again\n", q.Tool, q.Server)
	return nil
}

type quarantinedJSON struct {
	Server string   `json:"server"`
	Tool   string   `json:"tool"`
	New    bool     `json:"new,omitempty"`
	Since  string   `json:"since"`
	Diff   []string `json:"diff"`
}

func quarantineJSON(qs []*policy.Quarantine) []quarantinedJSON {
	out := []quarantinedJSON{}
	for _, q := range qs {
		out = append(out, quarantinedJSON{Server: q.Server, Tool: q.Tool, New: q.New, Since: q.Since.UTC().Format("2006-01-02T15:04:05Z"), Diff: q.Diff(200)})
	}
	return out
}

// printQuarantined names the servers with quarantined tools, and the
// warnings of servers' policies, for status.
func printQuarantined(w io.Writer, servers []serverJSON) {
	for _, s := range servers {
		for _, warn := range s.Warnings {
			fmt.Fprintf(w, "\nwarning: %s\n", warn)
		}
		if s.Quarantined > 0 {
			fmt.Fprintf(w, "\n%s: %d quarantined %s: new or changed since approved (hint: switchboard approve %s shows what changed)\n",
				s.Name, s.Quarantined, plural(s.Quarantined, "tool"), s.Name)
		}
	}
}
