package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/policy"
)

// Output: one record a line, oldest first, on stdout (JSON lines with
// --json); how many records and unreadable lines, on stderr.

func auditCommand() *command {
	return &command{
		name: "audit", summary: "show the audit trail of calls, approvals and quarantines",
		usage: "[--server S] [--user SUBJECT] [--since DUR] [--json]",
		help: `Prints the audit trail (docs/policy.md): every tool call with its
decision, duration, outcome and sizes; every approval asked and its
answer; every tool quarantined or accepted. Arguments and results are
recorded only with settings.audit.payloads. With settings.store, the
trail of every replica is read from the shared PostgreSQL store.

  --server S    only records of server S
  --user SUB    only records of the user whose token's subject is SUB
                (serve --http with settings.identity; docs/team.md)
  --since DUR   only records of the last DUR, such as 30m, 24h or 7d

With --json, prints the records as JSON lines, as they are stored.`,
		run: runAudit,
	}
}

func runAudit(ctx context.Context, e *env, args []string) error {
	f := newFlags("audit", true)
	server := f.String("server", "", "only records of this `server`")
	user := f.String("user", "", "only records of the user whose token's subject is `SUBJECT`")
	since := f.String("since", "", "only records of the last `DUR` (30m, 24h, 7d)")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("audit takes no arguments; filter with --server, --user and --since")
	}
	filter := policy.Filter{Server: *server, User: *user}
	if *since != "" {
		d, err := parseAge(*since)
		if err != nil {
			return err
		}
		filter.Since = time.Now().Add(-d)
	}
	trail, where, err := e.openAuditTrail(ctx, f.config)
	if err != nil {
		return err
	}
	defer trail.Close()
	got, err := trail.Read(ctx, filter)
	if err != nil {
		return err
	}
	recs := got.Records
	if f.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetEscapeHTML(false)
		for _, r := range recs {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
	} else {
		tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
		// Records of a gateway with settings.identity name their user
		// in a last column; others print as they always have.
		for _, r := range recs {
			who := ""
			if r.User != "" {
				who = "\tuser=" + r.User
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n", r.Time.Local().Format("2006-01-02 15:04:05"), r.Event, r.Server,
				orDash(r.Tool), orDash(r.Decision), orDash(outcome(r)), brief(r.Why, 160), who)
		}
		tw.Flush()
	}
	fmt.Fprintf(e.stderr, "%d %s in %s\n", len(recs), plural(len(recs), "record"), where)
	if got.Unreadable > 0 {
		fmt.Fprintf(e.stderr, "warning: %d %s could not be read\n", got.Unreadable, plural(got.Unreadable, "line"))
	}
	if got.Missing > 0 {
		fmt.Fprintf(e.stderr, "warning: %d %s missing from the sessions' sequences: writes that failed (the replicas' logs say why)\n", got.Missing, plural(got.Missing, "record"))
	}
	return nil
}

// openAuditTrail opens the audit trail the configuration keeps, and says
// where it is: the shared store's table with settings.store (opened by
// openState, closed when the command ends), else the file in the state
// directory. Only settings.store is read: a configuration with other
// problems still shows the file, saying so.
func (e *env) openAuditTrail(ctx context.Context, explicit string) (policy.Auditor, string, error) {
	cfg := config.Load(e.dirs(explicit))
	if st := cfg.Settings.Store; st != nil {
		state, err := e.openState(ctx, cfg)
		if err != nil {
			return nil, "", err
		}
		a, err := policy.OpenPostgresAudit(ctx, state.db(), nil)
		if err != nil {
			return nil, "", err
		}
		return a, "the shared store (" + st.Postgres + ")", nil
	}
	if cfg.Err() != nil {
		fmt.Fprintf(e.stderr, "warning: the configuration has problems (switchboard config validate shows them); reading the audit file, as without settings.store\n")
	}
	path := filepath.Join(cfg.Dirs.StateDir(), policy.AuditFile)
	return policy.OpenAudit(path, 0, false), e.pretty(path), nil
}

func outcome(r policy.Record) string {
	if r.Outcome == "" || r.DurationMs == 0 {
		return r.Outcome
	}
	return fmt.Sprintf("%s %.1fms", r.Outcome, r.DurationMs)
}

// parseAge parses a duration, with d for days.
func parseAge(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		var days int
		if _, err := fmt.Sscanf(n, "%d", &days); err == nil && days > 0 && fmt.Sprint(days) == n {
			return time.Duration(days) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, usagef("--since takes a duration such as 30m, 24h or 7d, not %q", s)
	}
	return d, nil
}

func brief(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
