package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/switchboard-mcp/switchboard/config"
)

func importCommand() *command {
	return &command{
		name:    "import",
		summary: "list (or --write) the MCP servers another host has configured",
		usage:   "--from HOST [--write] [--project|--global] [--json]",
		help: `Reads another host's own MCP settings, read-only, and lists the servers
found there. With --write it copies them into Switchboard's own file
(references such as ${TOKEN} are kept as references; values are never read),
skipping names that file already defines. The host's file is never changed.

To follow a host's servers without copying them, add it to "imports" in
your config.json instead: {"imports": ["claude-desktop"]}.

Hosts: ` + strings.Join(config.HostNames(), ", "),
		run: runImport,
	}
}

type importJSON struct {
	Host     string         `json:"host"`
	Files    []string       `json:"files"`
	Servers  []importedJSON `json:"servers"`
	Warnings []problemJSON  `json:"warnings"`
	Written  []string       `json:"written,omitempty"`
	Skipped  []string       `json:"skipped,omitempty"`
}

// importedJSON is one server found in a host's file; disabled ones are
// written disabled.
type importedJSON struct {
	serverJSON
	Disabled bool `json:"disabled"`
}

func runImport(ctx context.Context, e *env, args []string) error {
	f := newFlags("import", true)
	from := f.String("from", "", "the `HOST` to read: "+strings.Join(config.HostNames(), ", "))
	write := f.Bool("write", false, "copy the servers into Switchboard's own file")
	var scope scopeFlags
	scope.add(f, "write to")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 0 || *from == "" {
		return usagef("import needs --from HOST, one of %s", strings.Join(config.HostNames(), ", "))
	}
	if !contains(config.HostNames(), *from) {
		return usagef("unknown host %q: use one of %s", *from, strings.Join(config.HostNames(), ", "))
	}
	d := e.dirs(f.config)
	imp := config.ImportHost(d, *from)
	out := importJSON{Host: *from, Files: nonNil(imp.Files), Servers: []importedJSON{}, Warnings: problems(imp.Problems)}
	for _, s := range imp.Servers {
		out.Servers = append(out.Servers, importedJSON{serverJSON: serverJSON{Name: s.Name, Transport: string(s.Type), Target: s.Target(),
			Source: s.Source.Path, SourceKind: string(s.Source.Kind), State: "importable"}, Disabled: s.Disabled})
	}
	if *write {
		sc, err := scope.scope(config.ScopeGlobal)
		if err != nil {
			return err
		}
		if out.Written, out.Skipped, err = writeImports(d, sc, imp); err != nil {
			return err
		}
	}
	if f.json {
		return writeJSON(e.stdout, out)
	}
	printImport(e, imp, out, *write)
	return nil
}

func writeImports(d config.Dirs, sc config.Scope, imp *config.Import) (written, skipped []string, err error) {
	for _, s := range imp.Servers {
		if _, err := config.AddServer(d, sc, s.Name, s.Definition(), false); err != nil {
			skipped = append(skipped, s.Name)
			continue
		}
		written = append(written, s.Name)
	}
	return written, skipped, nil
}

func printImport(e *env, imp *config.Import, out importJSON, write bool) {
	if len(imp.Files) == 0 {
		fmt.Fprintf(e.stdout, "no %s configuration found\n", imp.Host)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	if len(out.Servers) > 0 {
		fmt.Fprintln(tw, "SERVER\tTRANSPORT\tSOURCE\tTARGET")
	}
	var disabled []string
	for _, s := range out.Servers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s", s.Name, s.Transport, e.pretty(s.Source), s.Target)
		if s.Disabled {
			disabled = append(disabled, s.Name)
			fmt.Fprint(tw, "\t(disabled)")
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, p := range imp.Problems {
		fmt.Fprintf(e.stderr, "warning: %s\n", p.Error())
	}
	switch {
	case write:
		line := "wrote " + serverList(out.Written)
		if len(out.Skipped) > 0 {
			line += fmt.Sprintf("; skipped %d already defined (%s)", len(out.Skipped), strings.Join(out.Skipped, ", "))
		}
		fmt.Fprintln(e.stderr, line)
		if d := written(disabled, out.Written); len(d) > 0 {
			fmt.Fprintf(e.stderr, "written disabled, as %s has %s: %s (hint: switchboard enable %s)\n",
				imp.Host, itThem(len(d)), strings.Join(d, ", "), enableArg(d))
		}
	case len(out.Servers) > 0:
		fmt.Fprintf(e.stderr, "hint: switchboard import --from %s --write copies them into your config", imp.Host)
		if len(disabled) > 0 {
			fmt.Fprintf(e.stderr, "; %s will be written disabled, as %s has %s", strings.Join(disabled, ", "), imp.Host, itThem(len(disabled)))
		}
		fmt.Fprintln(e.stderr)
	}
}

// written keeps the names of list that were written.
func written(list, wrote []string) []string {
	var out []string
	for _, n := range list {
		if contains(wrote, n) {
			out = append(out, n)
		}
	}
	return out
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// enableArg is the NAME of the enable hint: the one server, or NAME.
func enableArg(list []string) string {
	if len(list) == 1 {
		return list[0]
	}
	return "NAME"
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
