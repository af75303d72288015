package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
)

func configCommand() *command {
	return &command{
		name:    "config",
		summary: "show where configuration lives, the effective configuration, or validate it",
		usage:   "paths|show|validate [--json] [--config FILE]",
		help: `Subcommands:
  paths      list the files Switchboard reads, lowest precedence first, and
             whether each exists; plus the state and cache directories
  show       print the effective configuration as JSON; secrets stay
             references such as ${GITHUB_TOKEN}, never values, and a
             literal that looks like a credential shows as [redacted],
             with the error in the server's "error" and on stderr
  validate   check every file; print each problem as file:line:col: path:
             message, and exit 1 if there is an error`,
		quick: true,
		run:   runConfig,
	}
}

func runConfig(ctx context.Context, e *env, args []string) error {
	f := newFlags("config", true)
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("config needs one of paths, show, validate")
	}
	d := e.dirs(f.config)
	switch pos[0] {
	case "paths":
		return configPaths(e, d, f.json)
	case "show":
		return configShow(e, config.Load(d))
	case "validate":
		return configValidate(e, config.Load(d), f.json)
	}
	return usagef("unknown config subcommand %q: use paths, show or validate", pos[0])
}

type pathJSON struct {
	Kind   string `json:"kind"`
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	State  string `json:"state"`
}

func configPaths(e *env, d config.Dirs, asJSON bool) error {
	c := config.Load(d)
	var rows []pathJSON
	for _, f := range c.Files {
		rows = append(rows, pathJSON{Kind: string(f.Kind), Path: f.Path, Exists: f.State != config.FileMissing, State: string(f.State)})
	}
	if asJSON {
		return writeJSON(e.stdout, map[string]any{"files": rows, "stateDir": d.StateDir(), "cacheDir": d.CacheDir()})
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tSTATE\tPATH")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Kind, r.State, e.pretty(r.Path))
	}
	fmt.Fprintf(tw, "state\t\t%s\n", e.pretty(d.StateDir()))
	fmt.Fprintf(tw, "cache\t\t%s\n", e.pretty(d.CacheDir()))
	return tw.Flush()
}

// showServer is one server in config show: our schema plus where it came
// from and, for a definition that cannot be used, why. A literal that looks
// like a credential shows as [redacted]; its error says where it is.
type showServer struct {
	config.Definition
	Source     string `json:"source"`
	DisabledBy string `json:"disabledBy,omitempty"`
	Error      string `json:"error,omitempty"`
}

func configShow(e *env, c *config.Config) error {
	servers := map[string]showServer{}
	for _, s := range c.Servers {
		def := s.Definition()
		def.Type = string(s.Type)
		ms := int(s.RequestTimeout / time.Millisecond)
		def.RequestTimeoutMs = &ms
		idle := int(s.IdleTimeout / time.Minute)
		def.IdleTimeout = &idle
		def.Lifecycle = string(s.Lifecycle)
		def.ProtocolVersion = s.ProtocolVersion
		sv := showServer{Definition: def, Source: s.Source.Path, DisabledBy: s.DisabledBy}
		if s.Err != nil {
			sv.Error = s.Err.Error()
		}
		servers[s.Name] = sv
	}
	st := c.Settings
	settings := map[string]any{
		"toolPrefix":       st.ToolPrefix,
		"idleTimeout":      int(st.IdleTimeout / time.Minute),
		"requestTimeoutMs": int(st.RequestTimeout / time.Millisecond),
		"output":           map[string]int{"maxBytes": st.Output.MaxBytes, "maxLines": st.Output.MaxLines},
		"directTools":      st.DirectTools,
		"imports":          nonNil(st.Imports),
	}
	if st.CredentialStore != "" {
		settings["credentialStore"] = st.CredentialStore
	}
	if st.CredentialStore == "encrypted-file" {
		settings["credentialStoreKey"] = st.CredentialKeyRef() // a reference, never the key
	}
	if st.Embeddings != nil {
		settings["embeddings"] = map[string]string{"baseUrl": st.Embeddings.BaseURL, "apiKey": st.Embeddings.APIKey, "model": st.Embeddings.Model}
	}
	if err := writeJSON(e.stdout, map[string]any{"mcpServers": servers, "settings": settings}); err != nil {
		return err
	}
	for _, p := range c.Errors() {
		fmt.Fprintf(e.stderr, "error: %s\n", p.Error())
	}
	if c.Err() != nil {
		fmt.Fprintln(e.stderr, "warning: the configuration is invalid, so no server can be used until the errors above are fixed")
	}
	return nil
}

func configValidate(e *env, c *config.Config, asJSON bool) error {
	errs, warns := c.Errors(), c.Warnings()
	if asJSON {
		if err := writeJSON(e.stdout, map[string]any{"valid": len(errs) == 0, "errors": problems(errs), "warnings": problems(warns)}); err != nil {
			return err
		}
	} else {
		for _, p := range errs {
			fmt.Fprintf(e.stdout, "%s\n", p.Error())
		}
		for _, p := range warns {
			fmt.Fprintf(e.stdout, "%s (warning)\n", p.Error())
		}
		if len(errs) == 0 {
			loaded := 0
			for _, f := range c.Files {
				if f.State == config.FileLoaded {
					loaded++
				}
			}
			fmt.Fprintf(e.stdout, "ok: %d servers from %d files\n", len(c.Servers), loaded)
		}
	}
	if len(errs) > 0 {
		return errSilent
	}
	return nil
}
