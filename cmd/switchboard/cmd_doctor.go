package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/switchboard-mcp/switchboard/cmd/switchboard/internal/doctor"
	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
)

// Output of doctor: one finding per paragraph, most severe first, as
//
//	error    server "github" runs "npx": not found on PATH
//	         at ~/.config/switchboard/config.json mcpServers.github.command
//	         fix: install Node.js (…)
//
// then a count. --json prints {"findings": […], "errors": N, "warnings": N}.

func doctorCommand() *command {
	return &command{
		name:    "doctor",
		summary: "find what keeps servers from working, and how to fix it",
		usage:   "[--connect] [--json]",
		help: `Checks the configuration files (problems with file:line:col), every ${VAR}
and ${secret:NAME} a server refers to (set or not; never the value), each
stdio server's command (on PATH, and its version where that is cheap to
ask), which hosts mount Switchboard and how, servers a host that mounts
Switchboard still loads itself (the fix is switchboard setup HOST
--migrate), the state, cache and spill directories, and the catalog's
integrity. With --connect it also connects every server, in parallel, each
within 30 seconds.

Each finding says what is wrong, where, and the command or edit that fixes
it. The exit code is 1 when any finding is an error.

Examples:
  switchboard doctor
  switchboard doctor --connect --json`,
		run: runDoctor,
	}
}

func runDoctor(ctx context.Context, e *env, args []string) error {
	f := newFlags("doctor", true)
	var connect bool
	f.BoolVar(&connect, "connect", false, "also connect every server (in parallel, 30s each)")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("doctor takes no arguments")
	}
	d := e.dirs(f.config)
	cfg := config.Load(d)
	quiet := *e
	quiet.stderr = io.Discard                          // setup's warning about a go run build is not doctor's to give
	self, _ := setupExecutable(&quiet, setupOptions{}) // "" (then "switchboard") when it cannot be found
	secrets, store, creds := e.doctorStore(ctx, cfg)
	findings := doctor.Run(ctx, doctor.Options{
		Config: cfg, LookupEnv: e.lookupEnv, Secrets: secrets, Store: store, Credentials: creds,
		SpillDir: spillDir(d), CatalogPath: catalogPath(d), Connect: connect, Pretty: e.pretty, SetupCommand: self,
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	errs, warns := doctor.Count(findings, doctor.Error), doctor.Count(findings, doctor.Warning)
	if f.json {
		if findings == nil {
			findings = []doctor.Finding{}
		}
		if err := writeJSON(e.stdout, map[string]any{"findings": findings, "errors": errs, "warnings": warns}); err != nil {
			return err
		}
	} else {
		printFindings(e.stdout, findings)
		fmt.Fprintf(e.stdout, "\n%d %s, %d %s\n", errs, plural(errs, "error"), warns, plural(warns, "warning"))
	}
	if errs > 0 {
		return errSilent
	}
	return nil
}

// doctorStore opens the credential store doctor reads secrets from and
// says which it is: with settings.store, whether the shared store
// answers; without, the local store settings.credentialStore names, opened
// (the default probes the keychain where nothing is stored yet), flagged
// when it keeps credentials unencrypted. A shared store that fails leaves
// no credential store: its finding says why.
func (e *env) doctorStore(ctx context.Context, cfg *config.Config) (credstore.Store, *doctor.StoreState, *doctor.CredentialState) {
	if cfg.Settings.Store == nil {
		l := e.credentials(ctx, cfg)
		l.warn = nil // the finding says it
		s, err := l.open()
		if err != nil {
			return l, nil, &doctor.CredentialState{Err: err}
		}
		cs := &doctor.CredentialState{Where: credstore.Describe(s), Why: l.why}
		cs.Unencrypted, _ = credstore.Unencrypted(s)
		return l, nil, cs
	}
	st, err := e.openState(ctx, cfg)
	if err != nil {
		return nil, &doctor.StoreState{Err: err}, nil
	}
	if err := st.ready(ctx); err != nil {
		return nil, &doctor.StoreState{Where: st.describe(), Err: err}, nil
	}
	return st.creds, &doctor.StoreState{Where: st.describe(), Schema: schemaOf(ctx, st)}, nil
}

func printFindings(w io.Writer, fs []doctor.Finding) {
	for i, f := range fs {
		if i > 0 && (f.Severity != doctor.OK || fs[i-1].Severity != doctor.OK) {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%-8s %s\n", f.Severity, strings.ReplaceAll(f.What, "\n", "\n         "))
		if f.Where != "" && f.Severity != doctor.OK {
			fmt.Fprintf(w, "         at %s\n", f.Where)
		}
		if f.Fix != "" {
			fmt.Fprintf(w, "         fix: %s\n", f.Fix)
		}
	}
}
