package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
)

func importCommand() *command {
	return &command{
		name:    "import",
		summary: "list (or --write) the MCP servers another host has configured",
		usage:   "--from HOST [--write] [--move-secrets] [--project|--global] [--json]",
		help: `Reads another host's own MCP settings, read-only, and lists the servers
found there. With --write it copies them into Switchboard's own file
(references such as ${TOKEN} are kept as references; values are never read),
skipping names that file already defines. The host's file is never changed.

A server whose entry holds a literal credential (a token in its env, an
Authorization header) is skipped: Switchboard's files hold references only.
With --move-secrets, each such literal is moved into the credential store
(see switchboard secret) as SERVER_FIELD, GITHUB_GITHUB_TOKEN for the env
GITHUB_TOKEN of server github, and the definition written refers to it as
${secret:GITHUB_GITHUB_TOKEN}. A secret of that name that holds another
value is never replaced: the new one is stored as NAME_2 (and so on), and
the command says so. Without --write it only lists what would be moved.

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
	Moved    []movedJSON    `json:"moved,omitempty"`
	Store    string         `json:"store,omitempty"` // the credential store they moved into: "keychain" or "file"
}

// movedJSON is a literal credential moved (or, without --write, to be
// moved) into the credential store; never its value.
type movedJSON struct {
	Server string `json:"server"`
	Secret string `json:"secret"`
	From   string `json:"from"` // where the host's file holds it
	// Existing is true when the store already held the same value under
	// that name; RenamedFrom names the name it would have had, taken by
	// another value.
	Existing    bool   `json:"existing,omitempty"`
	RenamedFrom string `json:"renamedFrom,omitempty"`
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
	move := f.Bool("move-secrets", false, "move literal credentials into the credential store and write ${secret:NAME} references")
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
	imp := config.ImportHostWith(d, *from, config.ImportOptions{MoveSecrets: *move})
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
		var store credstore.Store
		if len(imp.Moved) > 0 {
			st, err := e.openState(ctx, config.Load(d))
			if err != nil {
				return err
			}
			store = st.creds
		}
		if out.Written, out.Skipped, out.Moved, err = writeImports(d, sc, imp, store); err != nil {
			return err
		}
		if len(out.Moved) > 0 {
			out.Store = store.Name()
		}
	} else {
		for _, m := range imp.Moved {
			out.Moved = append(out.Moved, movedJSON{Server: m.Server, Secret: m.Name, From: m.Path})
		}
	}
	if f.json {
		return writeJSON(e.stdout, out)
	}
	printImport(e, imp, out, *write)
	return nil
}

// writeImports writes the servers of imp that our file of scope sc does
// not define yet. The secrets moved out of a server's definition are
// stored first; those it created are removed again if the server is not
// written.
func writeImports(d config.Dirs, sc config.Scope, imp *config.Import, store credstore.Store) (written, skipped []string, moved []movedJSON, err error) {
	for _, s := range imp.Servers {
		def := s.Definition()
		stored, created, err := storeMoved(store, imp.MovedOf(s.Name), &def)
		if err != nil {
			return written, skipped, moved, fmt.Errorf("server %q: moving its secrets: %w", s.Name, err)
		}
		if _, err := config.AddServer(d, sc, s.Name, def, false); err != nil {
			for _, key := range created {
				store.Delete(key)
			}
			skipped = append(skipped, s.Name)
			continue
		}
		written = append(written, s.Name)
		moved = append(moved, stored...)
	}
	return written, skipped, moved, nil
}

// storeMoved stores the secrets moved out of one server's definition
// def. A name that already holds the same value is used as it is; one
// that holds another value is never overwritten: the secret goes to the
// first free NAME_2, NAME_3, …, and def is changed to refer to it. It
// returns what it did, and the keys it created.
func storeMoved(store credstore.Store, list []config.MovedSecret, def *config.Definition) (moved []movedJSON, created []string, err error) {
	for _, m := range list {
		mj := movedJSON{Server: m.Server, Secret: m.Name, From: m.Path}
		for i := 2; ; i++ {
			key := credstore.SecretKey(mj.Secret)
			v, ok, err := store.Get(key)
			if err != nil {
				return moved, created, err
			}
			if !ok {
				if err := store.Set(key, []byte(m.Value.Reveal())); err != nil {
					return moved, created, err
				}
				created = append(created, key)
				break
			}
			if string(v) == m.Value.Reveal() {
				mj.Existing = true
				break
			}
			suffix := fmt.Sprintf("_%d", i)
			mj.Secret = m.Name[:min(len(m.Name), config.MaxSecretName-len(suffix))] + suffix
			mj.RenamedFrom = m.Name
		}
		def.RenameSecret(m.Name, mj.Secret)
		moved = append(moved, mj)
	}
	return moved, created, nil
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
		printMoved(e, out.Moved, out.Store)
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
		printMoved(e, out.Moved, "")
		fmt.Fprintf(e.stderr, "hint: switchboard import --from %s --write", imp.Host)
		if len(out.Moved) > 0 {
			fmt.Fprint(e.stderr, " --move-secrets")
		}
		fmt.Fprint(e.stderr, " copies them into your config")
		if len(disabled) > 0 {
			fmt.Fprintf(e.stderr, "; %s will be written disabled, as %s has %s", strings.Join(disabled, ", "), imp.Host, itThem(len(disabled)))
		}
		fmt.Fprintln(e.stderr)
	}
}

// printMoved says which secrets were moved into the store named store,
// or, before --write (store is empty), would be; never a value.
func printMoved(e *env, moved []movedJSON, store string) {
	if len(moved) == 0 {
		return
	}
	var names []string
	for _, m := range moved {
		names = append(names, fmt.Sprintf("%s (%s)", m.Secret, m.Server))
	}
	n := fmt.Sprintf("%d %s", len(moved), plural(len(moved), "literal credential"))
	if store == "" {
		fmt.Fprintf(e.stderr, "with --write, %s would move into the credential store: %s\n", n, strings.Join(names, ", "))
		return
	}
	fmt.Fprintf(e.stderr, "moved %s into the %s credential store: %s\n", n, store, strings.Join(names, ", "))
	for _, m := range moved {
		switch {
		case m.RenamedFrom != "":
			fmt.Fprintf(e.stderr, "secret %s already holds another value, so the one of %s is stored as %s\n", m.RenamedFrom, m.From, m.Secret)
		case m.Existing:
			fmt.Fprintf(e.stderr, "secret %s already held the value of %s\n", m.Secret, m.From)
		}
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
