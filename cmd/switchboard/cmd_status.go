package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboard-mcp/switchboard"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/proxy"
)

func statusCommand() *command {
	return &command{
		name:    "status",
		summary: "show configured servers, where they come from, and configuration problems",
		usage:   "[--json] [--config FILE]",
		help: `Lists every configured server with its transport, state, tool count, when
it was indexed and source file; the last error of servers that failed; the
project files that are ignored until trusted; and every configuration error
and warning. It never connects to a server and never resolves a secret:
tool counts and failures come from the catalog, which every command that
uses a server (index, search, call, serve, …) keeps up to date.

States: enabled, disabled, invalid (this definition cannot be used),
blocked (the configuration cannot be read, so no server is usable),
needs-auth (the server refused authorization when last used: HTTP 401, or
403 insufficient_scope), failed (the server could not be used when last
tried). needs-auth and failed clear once the server answers again.

With settings.store, it also says which PostgreSQL database holds the
shared state and whether it answers (docs/team.md); --json always has a
store field, "local" without it.

It exits 1 when the configuration cannot be read (a file named with
--config or SWITCHBOARD_CONFIG that does not exist, a file that does not
parse): then no server is usable. An error in one server's entry makes
only that server invalid, and status exits 0.`,
		quick: true,
		run:   runStatus,
	}
}

// statusJSON is the stable --json shape of status.
type statusJSON struct {
	Servers  []serverJSON  `json:"servers"`
	Files    []fileJSON    `json:"files"`
	Project  *projectJSON  `json:"project,omitempty"`
	Errors   []problemJSON `json:"errors"`
	Warnings []problemJSON `json:"warnings"`
	Store    storeJSON     `json:"store"`
}

// storeJSON says where the state lives: this machine, or the PostgreSQL
// database of settings.store, and whether it answers. Never a value.
type storeJSON struct {
	Kind    string `json:"kind"`            // "local" or "postgres"
	Where   string `json:"where"`           // "database D on HOST:PORT", or what settings.store refers to
	Answers bool   `json:"answers"`         // always true for local
	Error   string `json:"error,omitempty"` // why it does not answer
	// Warning says that credentials are kept unencrypted: the local file
	// store is named, or is the default and holds some.
	Warning string `json:"warning,omitempty"`
}

type serverJSON struct {
	Name       string    `json:"name"`
	Transport  string    `json:"transport"`
	Target     string    `json:"target"`
	State      string    `json:"state"`
	Source     string    `json:"source"`
	SourceKind string    `json:"sourceKind"`
	DisabledBy string    `json:"disabledBy,omitempty"`
	Tools      int       `json:"tools"` // -1 when not known
	IndexedAt  time.Time `json:"indexedAt,omitzero"`
	ErrorClass string    `json:"errorClass,omitempty"`
	Error      string    `json:"error,omitempty"`
	ErrorAt    time.Time `json:"errorAt,omitzero"`
	// Quarantined counts the tools whose definition changed since it was
	// approved (docs/policy.md).
	Quarantined int `json:"quarantined,omitempty"`
	// Warnings are problems of the server's policy found against its
	// tools, such as an approve glob that matches none.
	Warnings []string `json:"warnings,omitempty"`
}

type fileJSON struct {
	Path    string   `json:"path"`
	Kind    string   `json:"kind"`
	Host    string   `json:"host,omitempty"`
	State   string   `json:"state"`
	Servers []string `json:"servers"`
}

type projectJSON struct {
	Dir     string   `json:"dir"`
	Files   []string `json:"files"`
	Trusted bool     `json:"trusted"`
	Changed bool     `json:"changed"`
}

type problemJSON struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Path    string `json:"path,omitempty"`
	Server  string `json:"server,omitempty"`
	Message string `json:"message"`
}

func runStatus(ctx context.Context, e *env, args []string) error {
	f := newFlags("status", true)
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("status takes no arguments")
	}
	c := config.Load(e.dirs(f.config))
	store, state := e.storeStatus(ctx, c)
	st := statusOf(c, e.serverStatus(ctx, c, state))
	st.Store = store
	if f.json {
		if err := writeJSON(e.stdout, st); err != nil {
			return err
		}
	} else {
		printStatus(e, c, st, schemaOf(ctx, state))
	}
	if c.Err() != nil {
		// The configuration cannot be read (a file that is missing when
		// named, or does not parse): the listing above says why; the
		// exit code says it too.
		return errSilent
	}
	return nil
}

// serverState is what the definition says of a server, as the engine's
// Status says it: blocked, disabled or invalid as config.Usable decides,
// or "enabled" when it may be used.
func serverState(c *config.Config, s *config.Server) string {
	_, err := c.Usable(s.Name)
	switch {
	case err == nil:
		return "enabled"
	case errors.Is(err, config.ErrDisabled):
		return proxy.StateDisabled
	case errors.Is(err, c.Err()):
		return proxy.StateBlocked
	}
	return proxy.StateInvalid
}

// serverStatus returns what the catalog knows of each server (tool count,
// when indexed, last failure), from a passive engine: it starts nothing and
// resolves no secret. Without a catalog there is nothing to know; one that
// cannot be read is a warning.
//
// With settings.store the catalog is in its database (state's), when that
// answers; when it does not, storeStatus says why and this knows nothing.
func (e *env) serverStatus(ctx context.Context, c *config.Config, state *state) map[string]proxy.ServerStatus {
	opts := &switchboard.Options{Passive: true, CatalogPath: filepath.Join(c.Dirs.CacheDir(), "catalog.db"), Lookup: e.lookupEnv,
		Logger: slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelError}))}
	switch {
	case c.Settings.Store != nil && state == nil:
		return nil
	case c.Settings.Store != nil:
		// The store's key too: the engine checks the pins' signatures
		// with it, and refuses a store without one.
		opts.Store, opts.StoreKey = state.db(), state.shared.Key
	default:
		if _, err := os.Stat(opts.CatalogPath); err != nil {
			return nil
		}
	}
	eng, err := switchboard.New(ctx, c, opts)
	if err != nil {
		fmt.Fprintf(e.stderr, "switchboard status: tool counts and failures unknown: %v\n", err)
		return nil
	}
	defer eng.Close()
	out := map[string]proxy.ServerStatus{}
	for _, st := range eng.Status(ctx) {
		out[st.Name] = st
	}
	return out
}

// storeStatus says where the state lives and, with settings.store,
// whether its database answers; state is the opened store then (nil when
// it failed, or without settings.store). The local state is not probed:
// status touches no keychain.
func (e *env) storeStatus(ctx context.Context, c *config.Config) (storeJSON, *state) {
	if c.Settings.Store == nil {
		out := storeJSON{Kind: "local", Where: "this machine: the SQLite catalog, the keychain or file credential store, audit.jsonl", Answers: true}
		if f, n, err := credstore.Plaintext(c.Settings.CredentialStore, c.Dirs.StateDir()); err == nil && f != nil {
			out.Warning = fmt.Sprintf("credentials are kept unencrypted in %s (%d stored): whoever can read your files can read them (hint: %s)", e.pretty(f.Dir()), n, credstore.EncryptHint)
		}
		return out, nil
	}
	out := storeJSON{Kind: "postgres", Where: "the database " + c.Settings.Store.Postgres + " names"}
	st, err := e.openState(ctx, c)
	if err != nil {
		out.Error = err.Error()
		return out, nil
	}
	out.Where = st.shared.Credentials.Where()
	if err := st.ready(ctx); err != nil {
		out.Error = err.Error()
		return out, nil
	}
	out.Answers = true
	return out, st
}

// schemaOf lists the schema version of each component in the shared
// store, for the text: "catalog 1, credentials 1".
func schemaOf(ctx context.Context, st *state) string {
	if st == nil || st.shared == nil {
		return ""
	}
	versions, err := st.shared.Schema(ctx)
	if err != nil {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(versions)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, versions[k]))
	}
	return strings.Join(parts, ", ")
}

// printStore says where the shared state is, with settings.store.
func printStore(w io.Writer, c *config.Config, st storeJSON, schema string) {
	if c.Settings.Store == nil {
		if st.Warning != "" {
			fmt.Fprintf(w, "\nwarning: %s\n", st.Warning)
		}
		return
	}
	switch {
	case st.Answers && schema != "":
		fmt.Fprintf(w, "\nStore: PostgreSQL, %s: answers (schema versions: %s)\n", st.Where, schema)
	case st.Answers:
		fmt.Fprintf(w, "\nStore: PostgreSQL, %s: answers\n", st.Where)
	default:
		fmt.Fprintf(w, "\nStore: PostgreSQL, %s: does not answer: %s\n", st.Where, st.Error)
	}
}

func statusOf(c *config.Config, live map[string]proxy.ServerStatus) statusJSON {
	st := statusJSON{Servers: []serverJSON{}, Files: []fileJSON{}, Errors: problems(c.Errors()), Warnings: problems(c.Warnings())}
	for _, s := range c.Servers {
		sj := serverJSON{
			Name: s.Name, Transport: string(s.Type), Target: s.Target(), State: serverState(c, s),
			Source: s.Source.Path, SourceKind: string(s.Source.Kind), DisabledBy: s.DisabledBy, Tools: -1,
		}
		if s.Err != nil {
			sj.Error = s.Err.Error()
		}
		if l, ok := live[s.Name]; ok {
			sj.Tools, sj.IndexedAt, sj.Quarantined, sj.Warnings = l.Tools, l.IndexedAt, l.Quarantined, l.Warnings
			if sj.State == "enabled" && (l.State == proxy.StateNeedsAuth || l.State == proxy.StateFailed) {
				sj.State, sj.ErrorClass, sj.Error, sj.ErrorAt = l.State, l.ErrorClass, l.Error, l.ErrorAt
			}
		}
		st.Servers = append(st.Servers, sj)
	}
	st.Servers = append(st.Servers, dropped(c)...)
	sort.SliceStable(st.Servers, func(i, j int) bool { return st.Servers[i].Name < st.Servers[j].Name })
	for _, f := range c.Files {
		if f.State == config.FileMissing {
			continue
		}
		st.Files = append(st.Files, fileJSON{Path: f.Path, Kind: string(f.Kind), Host: f.Host, State: string(f.State), Servers: nonNil(f.Servers)})
	}
	if len(c.Project.Files) > 0 {
		st.Project = &projectJSON{Dir: c.Project.Dir, Files: c.Project.Files, Trusted: c.Project.Trusted, Changed: c.Project.Changed}
	}
	return st
}

// dropped lists the servers whose definitions are too broken to configure
// anything, each with its first error and the file that holds it.
func dropped(c *config.Config) []serverJSON {
	var out []serverJSON
	seen := map[string]bool{}
	for _, p := range c.Errors() {
		if p.Server == "" || seen[p.Server] {
			continue
		}
		seen[p.Server] = true
		if _, ok := c.Server(p.Server); ok {
			continue
		}
		sj := serverJSON{Name: p.Server, State: proxy.StateInvalid, Source: p.File, Tools: -1, ErrorClass: "config", Error: p.Error()}
		for _, f := range c.Files {
			if f.Path == p.File {
				sj.SourceKind = string(f.Kind)
			}
		}
		out = append(out, sj)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func problems(ps []config.Problem) []problemJSON {
	out := []problemJSON{}
	for _, p := range ps {
		out = append(out, problemJSON{File: p.File, Line: p.Line, Col: p.Col, Path: p.Path, Server: p.Server, Message: p.Message})
	}
	return out
}

func printStatus(e *env, c *config.Config, st statusJSON, schema string) {
	w := e.stdout
	if len(st.Servers) == 0 {
		fmt.Fprintln(w, "no servers configured")
		printOtherHosts(w, c)
	} else {
		now := time.Now()
		var table strings.Builder
		tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tTRANSPORT\tSTATE\tTOOLS\tINDEXED\tSOURCE\tTARGET")
		for _, s := range st.Servers {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, orDash(s.Transport), s.State, toolCount(s.Tools), ago(now, s.IndexedAt),
				e.pretty(s.Source), orDash(s.Target))
		}
		tw.Flush()
		pal := e.palette(w)
		fmt.Fprint(w, colorColumn(table.String(), "STATE", pal, pal.State))
		printFailures(w, st.Servers, now)
		printQuarantined(w, st.Servers)
	}
	printStore(w, c, st.Store, schema)
	printIgnored(e, c)
	printProblems(e, w, "error", c.Errors())
	printProblems(e, w, "warning", nonIgnoredWarnings(c))
	if err := c.Err(); err != nil {
		fmt.Fprintln(w, "\nNo server is usable until the configuration error is fixed (hint: switchboard config validate).")
	}
}

// printFailures shows the last error of each server that failed when last
// used; configuration errors are printed with the other problems.
func printFailures(w io.Writer, servers []serverJSON, now time.Time) {
	head := false
	for _, s := range servers {
		if s.ErrorAt.IsZero() {
			continue
		}
		if !head {
			fmt.Fprintln(w, "\nLast errors:")
			head = true
		}
		fmt.Fprintf(w, "  %s (%s, %s): %s\n", s.Name, s.ErrorClass, ago(now, s.ErrorAt), strings.Join(strings.Fields(s.Error), " "))
	}
}

func toolCount(n int) string {
	if n < 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// ago says how long ago t was, to the second; "-" for never.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return now.Sub(t).Round(time.Second).String() + " ago"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printIgnored explains the project files that do not count yet.
func printIgnored(e *env, c *config.Config) {
	p := c.Project
	if len(p.Files) == 0 || p.Trusted {
		return
	}
	why := "the project is not trusted"
	if p.Changed {
		why = "its definitions changed since you trusted it"
	}
	fmt.Fprintf(e.stdout, "\nIgnored project files (%s):\n", why)
	for _, f := range c.Files {
		if f.State != config.FileIgnored {
			continue
		}
		servers := "no servers"
		if len(f.Servers) > 0 {
			servers = "servers: " + strings.Join(f.Servers, ", ")
		}
		fmt.Fprintf(e.stdout, "  %s (%s)\n", e.pretty(f.Path), servers)
	}
	fmt.Fprintf(e.stdout, "hint: review them, then run switchboard trust in %s\n", e.pretty(p.Dir))
}

// nonIgnoredWarnings leaves out the "ignored" warnings printIgnored explains.
func nonIgnoredWarnings(c *config.Config) []config.Problem {
	var out []config.Problem
	for _, p := range c.Warnings() {
		if strings.HasPrefix(p.Message, "ignored: ") {
			continue
		}
		out = append(out, p)
	}
	return out
}

func printProblems(e *env, w io.Writer, what string, ps []config.Problem) {
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%ss:\n", strings.ToUpper(what[:1])+what[1:])
	for _, p := range ps {
		fmt.Fprintf(w, "  %s\n", p.Error())
	}
}

// printOtherHosts, on a first run (no server), names the hosts whose own
// files define servers and the command that brings each host's over.
func printOtherHosts(w io.Writer, c *config.Config) {
	if lines := config.FirstRun(config.OtherHosts(c.Dirs)); lines != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, strings.Join(lines, "\n"))
	}
}
