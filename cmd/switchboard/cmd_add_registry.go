package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
	"github.com/switchboard-mcp/switchboard/internal/printable"
	"github.com/switchboard-mcp/switchboard/internal/registry"
)

// registryAdd is add NAME[@VERSION] for a name of the registry.
type registryAdd struct {
	e       *env
	cfg     *config.Config
	as      string            // the server's name in our configuration
	answers map[string]string // --arg KEY=VALUE
	use     string            // --use
	dryRun  bool
	scope   config.Scope
	force   bool
	json    bool
	store   credstore.Store // opened on first use
}

func (a *registryAdd) run(ctx context.Context, spec string) error {
	name, version, _ := strings.Cut(spec, "@")
	if version != "" && version != "latest" && !registry.ExactVersion(version) {
		return usagef("%q is not one exact version: write NAME@1.2.3, or NAME alone for the latest", version)
	}
	c, err := registryClient(a.cfg)
	if err != nil {
		return err
	}
	entry, ans, err := c.Get(ctx, name, version)
	switch {
	case errors.Is(err, registry.ErrNotFound):
		return a.notFound(ctx, c, name, version)
	case err != nil:
		return fmt.Errorf("adding %s: %w", spec, registryError(c, err))
	}
	if ans.Offline {
		fmt.Fprintf(a.e.stderr, "offline: the registry at %s does not answer; using its answer of %s\n", c.URL(), ans.CachedAt.Local().Format("2006-01-02 15:04"))
	}
	if st := entry.Status(); st != registry.StatusActive {
		return fmt.Errorf("%s@%s is %s in the registry: not added (hint: switchboard registry search %s)", name, entry.Server.Version, st, lastPart(name))
	}
	if a.as == "" {
		a.as = configName(name)
	}
	choice, err := registry.Choose(&entry.Server, exec.LookPath, a.use)
	if err != nil {
		return fmt.Errorf("adding %s@%s: %w", name, entry.Server.Version, err)
	}
	in, err := choice.Resolve(a.ask(ctx))
	if err != nil {
		return fmt.Errorf("adding %s@%s: %w", name, entry.Server.Version, err)
	}
	if err := a.unused(); err != nil {
		return err
	}
	def := config.Definition{Command: in.Command, Args: in.Args, Env: in.Env, URL: in.URL, Headers: in.Headers}
	if in.Type != "stdio" {
		def.Type = in.Type
	}
	var bundle *mcpbBundle
	if choice.Package != nil && choice.Package.RegistryType == registry.TypeMCPB {
		if bundle, err = loadMCPB(ctx, a.cfg.Dirs.StateDir(), a.as, choice.Package, &def); err != nil {
			return err
		}
		defer bundle.discard()
	}
	if a.dryRun {
		fmt.Fprintf(a.e.stderr, "would add %q (%s@%s, %s %s) to %s:\n", a.as, name, entry.Server.Version, choice.Kind(), in.Pin, a.scope)
		return writeJSON(a.e.stdout, map[string]any{"mcpServers": map[string]any{a.as: def}})
	}
	d := a.e.dirs("")
	d.Explicit = a.cfg.Dirs.Explicit
	path, err := config.AddServer(d, a.scope, a.as, def, a.force)
	if err != nil {
		return err
	}
	if err := bundle.keep(); err != nil {
		return fmt.Errorf("added %q, but its mcpb bundle could not be put in place: %w (hint: switchboard add %s --force)", a.as, err, name)
	}
	if err := recordInstall(a.cfg.Dirs, a.as, installRecord{Name: name, Version: entry.Server.Version, Kind: choice.Kind(), Pin: in.Pin, Scope: string(a.scope)}); err != nil {
		fmt.Fprintf(a.e.stderr, "warning: %v: switchboard update will not know %q came from the registry\n", err, a.as)
	}
	if a.json {
		return writeJSON(a.e.stdout, change(d, "added", a.as, path, a.scope))
	}
	fmt.Fprintf(a.e.stderr, "added %q (%s@%s, %s %s) to %s\n", a.as, name, entry.Server.Version, choice.Kind(), in.Pin, a.e.pretty(path))
	if choice.Remote != nil {
		fmt.Fprintf(a.e.stderr, "hint: if the server asks for OAuth, log in with switchboard auth login %s\n", a.as)
	}
	fmt.Fprintf(a.e.stderr, "hint: switchboard tools %s lists its tools\n", a.as)
	return nil
}

// notFound says an unknown name is unknown, with the registry's
// suggestions.
func (a *registryAdd) notFound(ctx context.Context, c *registry.Client, name, version string) error {
	what := name
	if version != "" {
		what += "@" + version
		if _, _, err := c.Get(ctx, name, ""); err == nil {
			return fmt.Errorf("%s has no version %s in the registry at %s (hint: switchboard update %s lists its versions once added, or add %s for the latest)", name, version, c.URL(), name, name)
		}
	}
	var names []string
	if page, err := c.Search(ctx, lastPart(name), registry.SearchOptions{Limit: 30}); err == nil {
		for _, en := range page.Entries {
			if len(names) < 5 {
				names = append(names, en.Server.Name)
			}
		}
	}
	msg := fmt.Sprintf("%s is not in the registry at %s", what, c.URL())
	if len(names) > 0 {
		msg += "; did you mean " + strings.Join(names, ", ")
	}
	return fmt.Errorf("%s (hint: switchboard registry search %s)", msg, lastPart(name))
}

// ask answers the entry's questions: --arg, then the terminal for the
// required ones, then the entry's defaults. Secrets go to the secret store
// and come back as references.
func (a *registryAdd) ask(ctx context.Context) registry.Asker {
	return func(q registry.Question) (string, bool, error) {
		desc := ""
		if q.Input.Description != "" {
			desc = " (" + printable.Clip(q.Input.Description, 120) + ")"
		}
		if q.Input.IsSecret {
			return a.secret(ctx, q, desc)
		}
		if v, ok := a.answers[q.Key]; ok {
			delete(a.answers, q.Key)
			if len(q.Input.Choices) > 0 && !slices.Contains(q.Input.Choices, v) {
				return "", false, usagef("--arg %s=%s: the %s %s takes one of %s", q.Key, v, q.What, q.Key, strings.Join(q.Input.Choices, ", "))
			}
			return v, true, nil
		}
		if !q.Input.IsRequired {
			return "", false, nil
		}
		if tty, ok := a.terminal(); ok && !a.dryRun {
			prompt := fmt.Sprintf("%s %s%s", q.What, q.Key, desc)
			if q.Input.Default != "" {
				prompt += " [" + printable.Clip(q.Input.Default, 80) + "]"
			}
			fmt.Fprint(a.e.stderr, prompt+": ")
			line, err := readLine(ctx, tty, 4096)
			if err != nil && !errors.Is(err, io.EOF) {
				return "", false, err
			}
			if v := strings.TrimRight(string(line), "\r\n"); v != "" {
				return v, true, nil
			}
		}
		if q.Input.Default != "" {
			fmt.Fprintf(a.e.stderr, "%s %s: the default, %s\n", q.What, q.Key, printable.Clip(q.Input.Default, 80))
			return q.Input.Default, true, nil
		}
		return "", false, usagef("the %s %s%s is required: give it with --arg %s=VALUE", q.What, q.Key, desc, q.Key)
	}
}

// secret stores a secret input and returns its reference: an answer kept
// in the store under the same name is used as it is; else the value is
// asked on the terminal without echo; never from the command line.
func (a *registryAdd) secret(ctx context.Context, q registry.Question, desc string) (string, bool, error) {
	if _, given := a.answers[q.Key]; given {
		return "", false, usagef("--arg %s: the %s %s is a secret, and a secret is never taken from the command line, where the shell's history and other users' process lists keep it: leave --arg %s off and type it at the prompt, or store it first with switchboard secret set %s", q.Key, q.What, q.Key, q.Key, secretNameFor(a.as, q.Key))
	}
	name := secretNameFor(a.as, q.Key)
	ref := "${secret:" + name + "}"
	if a.dryRun {
		return ref, true, nil
	}
	if a.store == nil {
		s, _, err := a.e.openStore(ctx, a.cfg)
		if err != nil {
			return "", false, err
		}
		a.store = s
	}
	if _, ok, err := a.store.Get(credstore.SecretKey(name)); err != nil {
		return "", false, err
	} else if ok {
		fmt.Fprintf(a.e.stderr, "%s %s: using the stored secret %s\n", q.What, q.Key, name)
		return ref, true, nil
	}
	tty, ok := a.terminal()
	if !ok {
		if !q.Input.IsRequired {
			return "", false, nil
		}
		return "", false, fmt.Errorf("the %s %s%s is a secret, asked on a terminal, and standard input is not one: store it first with printf %%s \"$VALUE\" | switchboard secret set %s, then run add again", q.What, q.Key, desc, name)
	}
	value, err := promptHidden(ctx, tty, a.e.stderr, fmt.Sprintf("%s %s%s, a secret (not shown; kept as %s): ", q.What, q.Key, desc, name))
	if err != nil {
		return "", false, err
	}
	fmt.Fprintln(a.e.stderr)
	if len(value) == 0 {
		if !q.Input.IsRequired {
			return "", false, nil
		}
		return "", false, fmt.Errorf("the secret %s %s is required and was left empty: nothing written", q.What, q.Key)
	}
	if err := a.store.Set(credstore.SecretKey(name), value); err != nil {
		return "", false, err
	}
	fmt.Fprintf(a.e.stderr, "stored secret %s in the %s\n", name, credstore.Describe(a.store))
	return ref, true, nil
}

func (a *registryAdd) terminal() (*os.File, bool) {
	tty, ok := a.e.stdin.(*os.File)
	return tty, ok && isTerminal(tty)
}

// unused refuses --arg answers that no question took.
func (a *registryAdd) unused() error {
	if len(a.answers) == 0 {
		return nil
	}
	keys := slices.Sorted(mapKeys(a.answers))
	return usagef("--arg %s: the entry has no such argument, variable or header", strings.Join(keys, ", --arg "))
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// mcpbBundle is a bundle unpacked next to its final directory, put in
// place by keep once the definition that runs it is written.
type mcpbBundle struct {
	tmp, dir string
	kept     bool
}

// loadMCPB downloads an MCPB bundle, checks it against the fileSha256 the
// registry lists, unpacks it (bounded, nothing outside its directory)
// beside server's directory under the state directory (mcpb/SERVER), and
// fills def with the command its manifest gives, run from that directory,
// with def's environment variables over the manifest's. Nothing is put in
// place until keep; discard removes what keep did not.
func loadMCPB(ctx context.Context, stateDir, server string, p *registry.Package, def *config.Definition) (*mcpbBundle, error) {
	parent := filepath.Join(stateDir, "mcpb")
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("adding the mcpb bundle %s: %w", p.Identifier, err)
	}
	file, err := registry.FetchBundle(ctx, &http.Client{Timeout: 10 * time.Minute}, p, parent)
	if err != nil {
		return nil, err
	}
	defer os.Remove(file)
	tmp, err := os.MkdirTemp(parent, ".unpack-")
	if err != nil {
		return nil, err
	}
	b := &mcpbBundle{tmp: filepath.Join(tmp, "bundle"), dir: filepath.Join(parent, server)}
	if err := registry.Unpack(file, b.tmp); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("unpacking the mcpb bundle %s: %w", p.Identifier, err)
	}
	m, err := registry.ReadManifest(b.tmp)
	if err == nil {
		def.Command, def.Args, def.Env, err = launch(m, b.dir, def.Env)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("adding the mcpb bundle %s: %w", p.Identifier, err)
	}
	return b, nil
}

// launch is the manifest's command run from dir, with the registry's
// environment variables over the manifest's.
func launch(m *registry.Manifest, dir string, regEnv map[string]string) (string, []string, map[string]string, error) {
	command, args, env, err := m.Launch(dir)
	if err != nil {
		return "", nil, nil, err
	}
	for k, v := range regEnv {
		if env == nil {
			env = map[string]string{}
		}
		env[k] = v
	}
	return command, args, env, nil
}

// keep puts the unpacked bundle in its directory. An older bundle there
// is moved aside first, and put back if the new one cannot take its
// place; discard removes it, so the caller calls keep only once the
// definition that runs the new bundle is written.
func (b *mcpbBundle) keep() error {
	if b == nil {
		return nil
	}
	old := filepath.Join(filepath.Dir(b.tmp), "old")
	if err := os.Rename(b.dir, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(b.tmp, b.dir); err != nil {
		if rerr := os.Rename(old, b.dir); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return fmt.Errorf("%w; and the older bundle could not be put back from %s: %v", err, old, rerr)
		}
		return err
	}
	b.kept = true
	return nil
}

// discard removes what keep did not put in place, and the older bundle
// keep moved aside once the new one is in place (an older bundle keep
// could not put back stays, where keep's error says).
func (b *mcpbBundle) discard() {
	if b == nil {
		return
	}
	if b.kept {
		os.RemoveAll(filepath.Dir(b.tmp))
		return
	}
	os.RemoveAll(b.tmp)
	os.Remove(filepath.Dir(b.tmp))
}

// configName is the server's name in our configuration: the registry
// name's last part.
func configName(name string) string { return lastPart(name) }

func lastPart(name string) string { return name[strings.LastIndex(name, "/")+1:] }

var notSecretChar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_]+`) })

// secretNameFor names the stored secret of a server's input: SERVER_KEY,
// in the letters a secret name takes.
func secretNameFor(server, key string) string {
	n := strings.ToUpper(notSecretChar().ReplaceAllString(server+"_"+key, "_"))
	if n == "" || n[0] >= '0' && n[0] <= '9' {
		n = "S_" + n
	}
	if len(n) > config.MaxSecretName {
		n = n[:config.MaxSecretName]
	}
	return n
}

var _ = bytes.TrimSpace
