package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/registry"
)

func updateCommand() *command {
	return &command{
		name:    "update",
		summary: "show newer registry versions of the servers added from the registry, and update their pins",
		usage:   "[NAME] [--write] [--json]",
		help: `For each server added with switchboard add NAME from the MCP registry (or
the one named), asks the registry for its latest version and shows the
ones that are newer than the version pinned. With --write, it rewrites the
pin in the server's definition (the package's exact version, or the
remote's URL) to the latest; nothing else of the definition changes. A
server added from an MCPB bundle gets the latest bundle: downloaded,
checked against its fileSha256, unpacked, and its definition rewritten
from the new manifest; the new bundle replaces the old one only once the
definition is written, and on any failure both stay as they were.

The tools of an updated server are checked against their approved
definitions when it next connects: a tool whose definition changed is
quarantined until approved (docs/policy.md).

With --json, prints [{"server", "name", "current", "latest", "newer",
"updated"}].`,
		run: runUpdate,
	}
}

// installRecord is what add remembers of a server it added from the
// registry, in the state directory's registry-installs.json.
type installRecord struct {
	Name    string `json:"name"`    // the registry's name
	Version string `json:"version"` // the entry's version
	Kind    string `json:"kind"`    // the package's registry type, or "remote"
	Pin     string `json:"pin"`     // the argument or URL that pins it
	Scope   string `json:"scope"`
}

func installsFile(d config.Dirs) string { return filepath.Join(d.StateDir(), "registry-installs.json") }

func readInstalls(d config.Dirs) (map[string]installRecord, error) {
	m := map[string]installRecord{}
	data, err := os.ReadFile(installsFile(d))
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("reading %s: %w (hint: remove it; switchboard add NAME writes it again)", installsFile(d), err)
	}
	return m, nil
}

func recordInstall(d config.Dirs, server string, r installRecord) error {
	m, err := readInstalls(d)
	if err != nil {
		return err
	}
	m[server] = r
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(d.StateDir(), 0o700); err != nil {
		return err
	}
	tmp := installsFile(d) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, installsFile(d))
}

type updateJSON struct {
	Server  string `json:"server"`
	Name    string `json:"name"`
	Current string `json:"current"`
	Latest  string `json:"latest"`
	Newer   bool   `json:"newer"`
	Updated bool   `json:"updated"`
}

func runUpdate(ctx context.Context, e *env, args []string) error {
	f := newFlags("update", true)
	write := f.Bool("write", false, "rewrite the pins of the servers that have a newer version")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("update takes at most one server NAME")
	}
	cfg := config.Load(e.dirs(f.config))
	installs, err := readInstalls(cfg.Dirs)
	if err != nil {
		return err
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range installs {
			if !yield(k) {
				return
			}
		}
	})
	if len(pos) == 1 {
		if _, ok := installs[pos[0]]; !ok {
			return fmt.Errorf("%q was not added from the registry, so update cannot tell its version (hint: switchboard add REGISTRY-NAME --force adds it again from the registry)", pos[0])
		}
		names = pos
	}
	c, err := registryClient(cfg)
	if err != nil {
		return err
	}
	out := []updateJSON{}
	for _, server := range names {
		rec := installs[server]
		u := updateJSON{Server: server, Name: rec.Name, Current: rec.Version}
		latest, _, err := c.Get(ctx, rec.Name, "")
		if err != nil {
			return fmt.Errorf("updating %q (%s): %w", server, rec.Name, registryError(c, err))
		}
		u.Latest = latest.Server.Version
		u.Newer = u.Latest != rec.Version
		if u.Newer && *write {
			if err := updatePin(ctx, e, cfg, server, rec, latest); err != nil {
				return err
			}
			u.Updated = true
		}
		out = append(out, u)
	}
	if f.json {
		return writeJSON(e.stdout, out)
	}
	if len(out) == 0 {
		fmt.Fprintln(e.stderr, "no server was added from the registry (hint: switchboard registry search WORDS)")
	}
	for _, u := range out {
		switch {
		case u.Updated:
			fmt.Fprintf(e.stdout, "%s\t%s\t%s -> %s\tupdated\n", u.Server, u.Name, u.Current, u.Latest)
		case u.Newer:
			fmt.Fprintf(e.stdout, "%s\t%s\t%s -> %s\n", u.Server, u.Name, u.Current, u.Latest)
		default:
			fmt.Fprintf(e.stdout, "%s\t%s\t%s\tup to date\n", u.Server, u.Name, u.Current)
		}
	}
	if !*write && slices.ContainsFunc(out, func(u updateJSON) bool { return u.Newer }) {
		fmt.Fprintln(e.stderr, "hint: switchboard update --write updates the pins; changed tools are quarantined until approved when the server next connects")
	}
	return nil
}

// updatePin rewrites the pin of server's definition to the latest entry's.
func updatePin(ctx context.Context, e *env, cfg *config.Config, server string, rec installRecord, latest *registry.Entry) error {
	s, ok := cfg.Server(server)
	if !ok {
		return fmt.Errorf("updating %q: it is no longer configured (hint: switchboard add %s)", server, rec.Name)
	}
	choice, err := registry.Choose(&latest.Server, func(string) (string, error) { return "", nil }, rec.Kind)
	if err != nil {
		return fmt.Errorf("updating %q to %s@%s: %w", server, rec.Name, latest.Server.Version, err)
	}
	pin := choice.Pin()
	def := s.Definition()
	if choice.Package != nil && choice.Package.RegistryType == registry.TypeMCPB {
		return updateMCPB(ctx, e, cfg, server, rec, def, latest, choice.Package)
	}
	switch {
	case choice.Remote != nil && def.URL == rec.Pin:
		def.URL = pin
	case slices.Contains(def.Args, rec.Pin):
		def.Args = slices.Clone(def.Args)
		def.Args[slices.Index(def.Args, rec.Pin)] = pin
	default:
		return fmt.Errorf("updating %q: its definition no longer holds the pin %s that add wrote, so it is left as it is (hint: switchboard add %s --force)", server, rec.Pin, rec.Name)
	}
	if _, err := config.AddServer(cfg.Dirs, config.Scope(rec.Scope), server, def, true); err != nil {
		return err
	}
	rec.Version, rec.Pin = latest.Server.Version, pin
	fmt.Fprintf(e.stderr, "updated %q to %s@%s (%s)\n", server, rec.Name, rec.Version, strings.TrimSpace(pin))
	return recordInstall(cfg.Dirs, server, rec)
}

// updateMCPB moves a server added from an MCPB bundle to the latest
// entry's bundle: downloaded and checked against its fileSha256, unpacked
// beside the server's directory, the definition rewritten from the new
// manifest and written, and only then the new bundle swapped in for the
// old. On any failure the definition and the directory stay as they were.
func updateMCPB(ctx context.Context, e *env, cfg *config.Config, server string, rec installRecord, old config.Definition, latest *registry.Entry, p *registry.Package) error {
	what := fmt.Sprintf("updating %q to %s@%s", server, rec.Name, latest.Server.Version)
	dir := filepath.Join(cfg.Dirs.StateDir(), "mcpb", server)
	if !runsFrom(old, dir) {
		return fmt.Errorf("updating %q: its definition no longer runs the mcpb bundle add unpacked in %s, so it is left as it is (hint: switchboard add %s --force)", server, dir, rec.Name)
	}
	def := old
	def.Env = ownEnv(old.Env, dir)
	bundle, err := loadMCPB(ctx, cfg.Dirs.StateDir(), server, p, &def)
	if err != nil {
		return fmt.Errorf("%s: %w (the server is left as it was)", what, err)
	}
	defer bundle.discard()
	if _, err := config.AddServer(cfg.Dirs, config.Scope(rec.Scope), server, def, true); err != nil {
		return fmt.Errorf("%s: %w (the server is left as it was)", what, err)
	}
	if err := bundle.keep(); err != nil {
		if _, rerr := config.AddServer(cfg.Dirs, config.Scope(rec.Scope), server, old, true); rerr != nil {
			return fmt.Errorf("%s: the new bundle could not be put in %s: %w; and the older definition could not be written back: %v (hint: switchboard add %s --force)", what, dir, err, rerr, rec.Name)
		}
		return fmt.Errorf("%s: the new bundle could not be put in %s: %w; the server is left as it was (hint: stop what runs it and try again)", what, dir, err)
	}
	rec.Version, rec.Pin = latest.Server.Version, p.Identifier
	fmt.Fprintf(e.stderr, "updated %q to %s@%s (%s)\n", server, rec.Name, rec.Version, rec.Pin)
	return recordInstall(cfg.Dirs, server, rec)
}

// runsFrom reports whether def runs something from dir: its command or
// one of its arguments is inside it.
func runsFrom(def config.Definition, dir string) bool {
	inside := func(p string) bool {
		rel, err := filepath.Rel(dir, p)
		return err == nil && filepath.IsLocal(rel)
	}
	return inside(def.Command) || slices.ContainsFunc(def.Args, inside)
}

// ownEnv is the environment variables of a definition that the bundle
// unpacked in dir did not set: those the registry's entry asked for, or
// the user added. A variable whose value is the installed manifest's is
// the manifest's, and the new manifest sets it (or not).
func ownEnv(env map[string]string, dir string) map[string]string {
	var manifest map[string]string
	if m, err := registry.ReadManifest(dir); err == nil {
		_, _, manifest, _ = m.Launch(dir)
	}
	var out map[string]string
	for k, v := range env {
		if mv, ok := manifest[k]; ok && mv == v {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}
