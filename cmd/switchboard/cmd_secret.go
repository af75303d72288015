package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
)

func secretCommand() *command {
	return &command{
		name:    "secret",
		summary: "store, list or remove the secrets that ${secret:NAME} references name",
		usage:   "set NAME | list [--json] | rm NAME",
		help: `Subcommands:
  set NAME   store a secret: the value is read from a prompt that does not
             show it, or from standard input when that is not a terminal
             (printf %s "$TOKEN" | switchboard secret set NAME); never from
             the command line, where other users and the shell's history
             would see it
  list       list the names of the stored secrets (never a value), which
             store holds them, and the ones the configuration refers to that
             are not stored
  rm NAME    remove a secret

A definition refers to a secret as ${secret:NAME} in env, headers or url;
it is read from the store when the server connects, so a serve started by
a GUI host gets it without your shell's environment. The store is the one
settings.credentialStore names: "keychain" (the OS keychain),
"encrypted-file" (0600 files in the state directory, encrypted with the
key in $SWITCHBOARD_CREDENTIAL_KEY or settings.credentialStoreKey) or
"file" (0600 files, unencrypted: a warning says so); by default the store
already in use, else the keychain where one answers, else the unencrypted
file. With settings.store,
secrets are kept, encrypted, in the PostgreSQL database that replicas
share (docs/team.md).`,
		run: runSecret,
	}
}

// maxSecret bounds a secret read from standard input.
const maxSecret = 64 << 10

func runSecret(ctx context.Context, e *env, args []string) error {
	f := newFlags("secret", true)
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("secret needs one of set, list, rm")
	}
	cfg := config.Load(e.dirs(f.config))
	switch pos[0] {
	case "set":
		name, err := secretName(pos, "set")
		if err != nil {
			return err
		}
		return secretSet(ctx, e, cfg, name)
	case "list", "ls":
		if len(pos) > 1 {
			return usagef("secret list takes no argument; got %q", pos[1])
		}
		return secretList(ctx, e, cfg, f.json)
	case "rm", "remove":
		name, err := secretName(pos, "rm")
		if err != nil {
			return err
		}
		return secretRemove(ctx, e, cfg, name)
	}
	return usagef("unknown secret subcommand %q: use set, list or rm", pos[0])
}

// secretName checks the NAME of set and rm. A value on the command line is
// refused, whatever its form: it would be in the shell's history and in
// the process list.
func secretName(pos []string, sub string) (string, error) {
	switch {
	case len(pos) < 2:
		return "", usagef("secret %s needs the secret's NAME", sub)
	case len(pos) > 2 || strings.Contains(pos[1], "="):
		if sub == "set" {
			return "", usagef("secret set takes no value on the command line, where the shell's history and other users' process lists keep it: run switchboard secret set NAME and type it at the prompt, or pipe it in: printf %%s \"$VALUE\" | switchboard secret set NAME")
		}
		return "", usagef("secret %s takes one NAME", sub)
	case !config.ValidSecretName(pos[1]):
		return "", usagef("invalid secret name %q: use 1 to %d letters, digits and '_', not starting with a digit (as in ${secret:NAME})", pos[1], config.MaxSecretName)
	}
	return pos[1], nil
}

// openStore opens the store that holds secrets: settings.store's in
// PostgreSQL, or the one settings.credentialStore names; why says how the
// default was chosen.
func (e *env) openStore(ctx context.Context, cfg *config.Config) (credstore.Store, string, error) {
	if cfg.Settings.Store != nil {
		st, err := e.openState(ctx, cfg)
		if err != nil {
			return nil, "", err
		}
		return st.creds, "", nil
	}
	return e.openCredentials(ctx, cfg.Settings, cfg.Dirs.StateDir(), e.stderr)
}

func secretSet(ctx context.Context, e *env, cfg *config.Config, name string) error {
	value, err := e.readSecret(ctx, name)
	if err != nil {
		return err
	}
	s, _, err := e.openStore(ctx, cfg)
	if err != nil {
		return err
	}
	key := credstore.SecretKey(name)
	_, existed, err := s.Get(key)
	if err != nil {
		return err
	}
	if err := s.Set(key, value); err != nil {
		return err
	}
	verb := "stored"
	if existed {
		verb = "replaced"
	}
	fmt.Fprintf(e.stderr, "%s secret %s in the %s\n", verb, name, credstore.Describe(s))
	return nil
}

// readSecret reads a secret's value: from a prompt that does not echo
// when standard input is a terminal, else all of standard input, less one
// final line break.
func (e *env) readSecret(ctx context.Context, name string) ([]byte, error) {
	var value []byte
	if tty, ok := e.stdin.(*os.File); ok && isTerminal(tty) {
		v, err := promptHidden(ctx, tty, e.stderr, fmt.Sprintf("value of secret %s (not shown): ", name))
		if err != nil {
			return nil, err
		}
		value = v
	} else {
		v, err := io.ReadAll(io.LimitReader(e.stdin, maxSecret+1))
		if err != nil {
			return nil, fmt.Errorf("reading the value of secret %s from standard input: %w", name, err)
		}
		if len(v) > maxSecret {
			return nil, fmt.Errorf("the value of secret %s on standard input is over %d KiB: nothing stored", name, maxSecret>>10)
		}
		value = bytes.TrimSuffix(bytes.TrimSuffix(v, []byte("\n")), []byte("\r"))
	}
	switch {
	case len(value) == 0:
		return nil, fmt.Errorf("the value of secret %s is empty: nothing stored (hint: printf %%s \"$VALUE\" | switchboard secret set %s)", name, name)
	case bytes.IndexByte(value, 0) >= 0:
		return nil, fmt.Errorf("the value of secret %s holds a NUL byte, which no environment variable or header can carry: nothing stored", name)
	}
	return value, nil
}

// promptHidden writes prompt to w and reads one line from the terminal
// tty with its echo off. Interrupted, it turns the echo back on before it
// returns; the read itself cannot be stopped, and ends with the process.
func promptHidden(ctx context.Context, tty *os.File, w io.Writer, prompt string) ([]byte, error) {
	restore, err := noEcho(tty)
	if err != nil {
		return nil, fmt.Errorf("%w (hint: pipe the value in: printf %%s \"$VALUE\" | switchboard secret set NAME)", err)
	}
	defer restore()
	fmt.Fprint(w, prompt)
	b, err := readLine(ctx, tty, maxSecret)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading the secret: %w", err)
	}
	return bytes.TrimRight(b, "\r\n"), nil
}

type secretListJSON struct {
	Store    string   `json:"store"`
	Location string   `json:"location"`
	Default  string   `json:"default,omitempty"` // why the default is this store
	Secrets  []string `json:"secrets"`
	Missing  []string `json:"missing"` // referred to by the configuration, not stored
}

func secretList(ctx context.Context, e *env, cfg *config.Config, asJSON bool) error {
	s, why, err := e.openStore(ctx, cfg)
	if err != nil {
		return err
	}
	keys, err := s.Keys("secret/")
	if err != nil {
		return err
	}
	out := secretListJSON{Store: s.Name(), Location: credstore.Describe(s), Default: why, Secrets: []string{}, Missing: []string{}}
	for _, k := range keys {
		out.Secrets = append(out.Secrets, strings.TrimPrefix(k, "secret/"))
	}
	users := secretUsers(cfg)
	for _, name := range sortedNames(users) {
		if !slices.Contains(out.Secrets, name) {
			out.Missing = append(out.Missing, name)
		}
	}
	if asJSON {
		return writeJSON(e.stdout, out)
	}
	for _, name := range out.Secrets {
		fmt.Fprintln(e.stdout, name)
	}
	where := out.Location
	if why != "" {
		where += " (the default: " + why + ")"
	}
	fmt.Fprintf(e.stderr, "%d %s in the %s\n", len(out.Secrets), plural(len(out.Secrets), "secret"), where)
	for _, name := range out.Missing {
		fmt.Fprintf(e.stderr, "warning: %s %s to ${secret:%s}, which is not stored (hint: switchboard secret set %s)\n",
			strings.Join(users[name], ", "), refer(len(users[name])), name, name)
	}
	return nil
}

func secretRemove(ctx context.Context, e *env, cfg *config.Config, name string) error {
	s, _, err := e.openStore(ctx, cfg)
	if err != nil {
		return err
	}
	key := credstore.SecretKey(name)
	if _, ok, err := s.Get(key); err != nil {
		return err
	} else if !ok {
		return fmt.Errorf("there is no secret %s in the %s (hint: switchboard secret list)", name, credstore.Describe(s))
	}
	if err := s.Delete(key); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "removed secret %s from the %s\n", name, credstore.Describe(s))
	if users := secretUsers(cfg)[name]; len(users) > 0 {
		fmt.Fprintf(e.stderr, "warning: %s still %s to ${secret:%s}, and will fail to connect until it is set again\n", strings.Join(users, ", "), refer(len(users)), name)
	}
	return nil
}

// secretUsers maps the secrets the configuration refers to to who refers
// to them: servers by name, and settings.embeddings.
func secretUsers(cfg *config.Config) map[string][]string {
	users := map[string][]string{}
	for _, s := range cfg.Servers {
		for _, name := range s.SecretReferences() {
			users[name] = append(users[name], "server "+s.Name)
		}
	}
	if em := cfg.Settings.Embeddings; em != nil {
		probe := &config.Server{URL: em.BaseURL, Headers: map[string]string{"": em.APIKey}}
		for _, name := range probe.SecretReferences() {
			users[name] = append(users[name], "settings.embeddings")
		}
	}
	return users
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func refer(n int) string {
	if n == 1 {
		return "refers"
	}
	return "refer"
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
