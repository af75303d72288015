package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/config/hosts"
)

// setup --migrate and --undo. Output: the diff a migration would make goes
// to stdout (it is what was asked for); what was done, what is kept and
// hints go to stderr; --json prints one object on stdout instead.

// setupJournal is where setup records its writes to hosts' files, for --undo.
func setupJournal(d config.Dirs) string { return filepath.Join(d.StateDir(), "setup-changes.json") }

type migrateJSON struct {
	File    string         `json:"file"`
	Turned  []hosts.Turned `json:"turned"` // what the write does (or did)
	Off     []string       `json:"off"`    // turned off in the file already
	Kept    []config.Kept  `json:"kept"`   // left on, and why
	Diff    string         `json:"diff"`   // the change, as a unified diff; "" for none
	Written bool           `json:"written"`
	Backup  string         `json:"backup"`
	Error   string         `json:"error,omitempty"` // why the file cannot be changed
}

// runMigrate plans, and with --write makes, the migration of host: after
// setup mounted Switchboard there, so that the file is read anew. mounted
// says this command's setup wrote the file: the migration then joins that
// write, one backup and one change for --undo.
func runMigrate(e *env, host string, o setupOptions, args []string, mounted bool) (*migrateJSON, error) {
	d := e.dirs("")
	served, kept := config.Load(d).ServedFrom(config.ImportHost(d, host))
	m, err := hosts.PlanMigrate(d.Hosts(), host, hosts.MigrateOptions{Name: o.name, Servers: served, Journal: setupJournal(d), Continues: mounted})
	if err != nil {
		return nil, err
	}
	for _, k := range m.Kept {
		kept = append(kept, config.Kept{Name: k.Name, Why: k.Why})
	}
	out := &migrateJSON{File: m.File, Turned: orEmpty(m.Turned), Off: orEmpty(m.Off), Kept: orEmpty(kept), Diff: m.Diff()}
	if m.Err != nil {
		out.Error = m.Err.Error()
	}
	if !o.json {
		printMigrate(e, m, kept)
	}
	if !o.write {
		if !o.json && m.Changes() {
			fmt.Fprintf(e.stderr, "hint: switchboard setup %s --write makes this change (after a backup of the file); setup %s --undo reverses it\n", shellJoin(e.goos, args), host)
		}
		return out, nil
	}
	out.Written, out.Backup, err = m.Write(time.Now())
	if !o.json {
		reportMigrate(e, m, out.Written, out.Backup)
	}
	return out, err
}

// printMigrate prints the change as a diff, and on stderr what stays on.
func printMigrate(e *env, m *hosts.Migration, kept []config.Kept) {
	for _, k := range kept {
		fmt.Fprintf(e.stderr, "kept %q on: %s\n", k.Name, k.Why)
	}
	for _, n := range m.Off {
		fmt.Fprintf(e.stderr, "%q is turned off in %s already\n", n, e.pretty(m.File))
	}
	switch {
	case m.Err != nil:
		fmt.Fprintf(e.stderr, "migrate: %s cannot be changed: %v\n", e.pretty(m.File), m.Err)
	case !m.Changes():
		fmt.Fprintf(e.stderr, "migrate: nothing to turn off in %s\n", e.pretty(m.File))
	default:
		fmt.Fprintf(e.stdout, "\n%s", m.Diff())
	}
}

// reportMigrate says, on stderr, what a write did.
func reportMigrate(e *env, m *hosts.Migration, written bool, backup string) {
	if backup != "" {
		fmt.Fprintf(e.stderr, "backed up %s to %s\n", e.pretty(m.File), e.pretty(backup))
	}
	if !written {
		return
	}
	var names []string
	for _, t := range m.Turned {
		names = append(names, fmt.Sprintf("%s (%s)", t.Name, t.How))
	}
	fmt.Fprintf(e.stderr, "turned off in %s: %s; restart %s (or reload its MCP servers): Switchboard serves them\n", e.pretty(m.File), strings.Join(names, ", "), m.Title)
}

type undoJSON struct {
	Host   string    `json:"host"`
	File   string    `json:"file"`
	What   string    `json:"what"`   // the write undone: setup or migrate
	Backup string    `json:"backup"` // the file put back; "" when setup had created it, and undo removed it
	Time   time.Time `json:"time"`   // when setup wrote it
}

// runSetupUndo reverses the last write setup made to host's file.
func runSetupUndo(e *env, host string, o setupOptions) error {
	c, err := hosts.Undo(setupJournal(e.dirs("")), host)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(e.stdout, undoJSON{Host: c.Host, File: c.File, What: c.What, Backup: c.Backup, Time: c.Time})
	}
	what := "setup --write"
	if c.What == "migrate" {
		what = "setup --migrate --write"
	}
	if c.Backup == "" {
		fmt.Fprintf(e.stderr, "removed %s, which %s created on %s\n", e.pretty(c.File), what, c.Time.Format(time.RFC3339))
		return nil
	}
	fmt.Fprintf(e.stderr, "restored %s from %s, as it was before %s on %s\n", e.pretty(c.File), e.pretty(c.Backup), what, c.Time.Format(time.RFC3339))
	return nil
}

// orEmpty makes a nil list an empty one, which JSON prints as [].
func orEmpty[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}
