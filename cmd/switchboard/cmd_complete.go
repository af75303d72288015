package main

// Completion candidates, for the scripts "switchboard completion" prints:
// they hand the command line to the hidden "switchboard __complete" and
// offer what it prints, so what is completed is decided here, once for
// every shell. It reads the configuration and the catalog only: it never
// connects to a server, starts one, or writes a file.

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/catalog"
	"github.com/switchboard-mcp/switchboard/internal/pgstore"
	"github.com/switchboard-mcp/switchboard/proxy"
)

func completeCommand() *command {
	return &command{
		name:    "__complete",
		summary: "print completion candidates (used by the completion scripts)",
		usage:   "WORD…",
		help: `Prints, one per line, the candidates for the last WORD of a command line
whose words after "switchboard" are given (the last may be empty). Commands,
flags, server names, host names, and, for call and describe, the names of
the tools in the catalog, and, for secret set and rm, the secrets the configuration
refers to. Offline: it never connects to a server.`,
		hidden: true,
		quick:  true,
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) == 0 {
				args = []string{""}
			}
			for _, c := range complete(ctx, e, args) {
				e.stdout.Write([]byte(c + "\n"))
			}
			return nil
		},
	}
}

// complete returns the candidates for the last of words.
func complete(ctx context.Context, e *env, words []string) []string {
	cur := words[len(words)-1]
	if len(words) == 1 {
		return withPrefix(append(commandNames(), "help"), cur)
	}
	if words[0] == "help" {
		if len(words) == 2 {
			return withPrefix(commandNames(), cur)
		}
		return nil
	}
	c := findCommand(words[0])
	if c == nil || c.hidden {
		return nil
	}
	fs := commandFlags(ctx, e, c)
	line := scanLine(fs, words[1:len(words)-1])
	switch {
	case line.pending != "":
		return withPrefix(flagValues(e, line, line.pending), cur)
	case strings.HasPrefix(cur, "-"):
		return withPrefix(flagNames(fs), cur)
	}
	return withPrefix(positional(ctx, e, c.name, line), cur)
}

// commandFlags returns a command's flags, by asking it for its help: every
// command parses its flags before it does anything, and returns them with
// the help request. Nil for a command without flags of its own.
func commandFlags(ctx context.Context, e *env, c *command) *flag.FlagSet {
	quiet := *e
	quiet.stdin, quiet.stdout, quiet.stderr = strings.NewReader(""), io.Discard, io.Discard
	var h *helpRequest
	if err := c.run(ctx, &quiet, []string{"--help"}); errors.As(err, &h) {
		return h.flags
	}
	return nil
}

// lineState is what the words before the one completed say.
type lineState struct {
	pos     []string          // positional arguments
	values  map[string]string // flag values given (--server, --config)
	pending string            // the flag whose value the completed word is
}

// scanLine reads words with the command's flags: which are positional,
// which flags have values, and whether the next word is a flag's value.
func scanLine(fs *flag.FlagSet, words []string) lineState {
	st := lineState{values: map[string]string{}}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == "--" {
			st.pos = append(st.pos, words[i+1:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if !strings.HasPrefix(w, "-") || w == "-" || fs == nil || fs.Lookup(name) == nil {
			st.pos = append(st.pos, w)
			continue
		}
		if isBool(fs.Lookup(name)) || hasValue {
			st.values[name] = value
			continue
		}
		if i+1 == len(words) {
			st.pending = name
			break
		}
		st.values[name] = words[i+1]
		i++
	}
	return st
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func flagNames(fs *flag.FlagSet) []string {
	if fs == nil {
		return nil
	}
	var out []string
	fs.VisitAll(func(f *flag.Flag) { out = append(out, "--"+f.Name) })
	return out
}

// flagValues completes the value of a flag; files are left to the shell.
func flagValues(e *env, line lineState, name string) []string {
	switch name {
	case "server":
		return serverNames(config.Load(e.dirs(line.values["config"])), "")
	case "from":
		return config.HostNames()
	}
	return nil
}

// positional completes the next positional argument of command name.
func positional(ctx context.Context, e *env, name string, line lineState) []string {
	n := len(line.pos)
	switch name {
	case "tools", "resources", "read", "prompts", "prompt", "instructions", "reconnect", "remove", "set", "enable", "disable":
		if n == 0 {
			return serverNames(config.Load(e.dirs(line.values["config"])), name)
		}
	case "index":
		return serverNames(config.Load(e.dirs(line.values["config"])), name)
	case "call", "describe":
		if n == 0 {
			return toolNames(ctx, config.Load(e.dirs(line.values["config"])), line.values["server"], e.lookupEnv)
		}
	case "setup":
		if n == 0 {
			return config.HostNames()
		}
	case "config":
		if n == 0 {
			return []string{"paths", "show", "validate"}
		}
	case "auth":
		switch {
		case n == 0:
			return []string{"login", "logout", "status"}
		case n == 1 && (line.pos[0] == "login" || line.pos[0] == "logout"):
			return serverNames(config.Load(e.dirs(line.values["config"])), name)
		}
	case "secret":
		if n == 0 {
			return []string{"list", "rm", "set"}
		}
		if n == 1 && (line.pos[0] == "set" || line.pos[0] == "rm") {
			// The names the configuration refers to: the store itself is
			// not opened, which could probe the keychain.
			return sortedNames(secretUsers(config.Load(e.dirs(line.values["config"]))))
		}
	case "completion":
		if n == 0 {
			return []string{"bash", "zsh", "fish"}
		}
	}
	return nil
}

// serverNames lists the servers a command takes: every configured one for
// remove, the disabled ones for enable, the enabled ones otherwise.
func serverNames(c *config.Config, command string) []string {
	var out []string
	for _, s := range c.Servers {
		switch {
		case command == "remove", command == "set", command == "enable" && s.Disabled, command != "enable" && !s.Disabled:
			out = append(out, s.Name)
		}
	}
	return out
}

// toolNames lists the tools the catalog holds for the usable servers, at
// their current definitions: prefixed (server_tool), or, for one server,
// as the server names them. A catalog that does not exist yet is not
// created. With settings.store the catalog is the shared one in
// PostgreSQL, asked within storeCompleteTimeout; without a reachable
// store, tool names are not completed.
func toolNames(ctx context.Context, cfg *config.Config, server string, env func(string) (string, bool)) []string {
	if cfg.Err() != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, storeCompleteTimeout)
	defer cancel()
	cat, closeCat := openCatalogToComplete(ctx, cfg, env)
	if cat == nil {
		return nil
	}
	defer closeCat()
	var out []string
	for _, s := range cfg.Servers {
		if s.Disabled || s.Err != nil || server != "" && !strings.EqualFold(s.Name, server) {
			continue
		}
		ent, ok, err := cat.Get(ctx, s.Name, s.Hash())
		if err != nil || !ok {
			continue
		}
		for _, t := range ent.Tools {
			if server != "" {
				out = append(out, t.Name)
			} else {
				out = append(out, proxy.ToolRef{Server: s.Name, Name: t.Name}.Prefixed())
			}
		}
	}
	sort.Strings(out)
	return out
}

// storeCompleteTimeout bounds completion's wait for the shared store: a
// tab press must not hang on an unreachable database.
const storeCompleteTimeout = 2 * time.Second

// openCatalogToComplete opens the catalog for completion, or returns nil
// when there is none to read: no catalog file yet, or a store that is not
// reachable or holds no catalog (completion migrates nothing). closeCat
// closes the catalog and, for the store, the connection.
func openCatalogToComplete(ctx context.Context, cfg *config.Config, env func(string) (string, bool)) (_ *catalog.Catalog, closeCat func()) {
	if cfg.Settings.Store == nil {
		path := catalogPath(cfg.Dirs)
		if _, err := os.Stat(path); err != nil {
			return nil, nil
		}
		cat, err := catalog.Open(path)
		if err != nil {
			return nil, nil
		}
		return cat, func() { cat.Close() }
	}
	dsn, _, err := cfg.Settings.Store.Resolve(env)
	if err != nil {
		return nil, nil
	}
	db, err := pgstore.Open(ctx, dsn)
	if err != nil {
		return nil, nil
	}
	cat, err := func() (*catalog.Catalog, error) {
		if v, err := pgstore.Versions(ctx, db); err != nil || v["catalog"] == 0 {
			return nil, errors.New("no catalog in the store")
		}
		return catalog.OpenPostgres(ctx, db, nil)
	}()
	if err != nil {
		db.Close()
		return nil, nil
	}
	return cat, func() { cat.Close(); db.Close() }
}

func withPrefix(list []string, prefix string) []string {
	var out []string
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}
