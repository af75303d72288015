package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/internal/printable"
	"github.com/switchboard-mcp/switchboard/internal/registry"
)

func registryCommand() *command {
	return &command{
		name:    "registry",
		summary: "search the MCP registry for servers to add",
		usage:   "search WORDS… [--all] [--cursor CURSOR] [--json]",
		help: `Searches the MCP registry (settings.registry; by default the official
one, https://registry.modelcontextprotocol.io) for the servers whose name,
title or description hold every word. It lists each server's name, latest
version, transports, whether it needs a secret, and its description; only
active entries, unless --all also lists deprecated and deleted ones.

A page holds up to 30 servers; when there are more, the last line gives
the --cursor of the next page. The last answers are kept in the cache
directory: when the registry does not answer, the kept answer to the same
search is shown and said to be offline.

Add a server it lists with switchboard add NAME (docs/registry.md).

With --json, prints {"registry", "offline", "cachedAt", "servers":
[{"name", "version", "description", "transports", "needsSecret",
"status"}], "nextCursor"}.`,
		run: runRegistry,
	}
}

type registrySearchJSON struct {
	Registry   string              `json:"registry"`
	Offline    bool                `json:"offline"`
	CachedAt   time.Time           `json:"cachedAt,omitzero"`
	Servers    []registryEntryJSON `json:"servers"`
	NextCursor string              `json:"nextCursor,omitempty"`
}

type registryEntryJSON struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	Description string   `json:"description"`
	Transports  []string `json:"transports"`
	NeedsSecret bool     `json:"needsSecret"`
	Status      string   `json:"status"`
}

func runRegistry(ctx context.Context, e *env, args []string) error {
	f := newFlags("registry", true)
	all := f.Bool("all", false, "also list deprecated and deleted entries")
	cursor := f.String("cursor", "", "the `CURSOR` of the page to show, from the previous page's last line")
	pos, _, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) == 0 || pos[0] != "search" {
		return usagef("registry needs a subcommand: search WORDS…")
	}
	if len(pos) < 2 {
		return usagef("registry search needs the WORDS to look for, such as: switchboard registry search github")
	}
	cfg := config.Load(e.dirs(f.config))
	c, err := registryClient(cfg)
	if err != nil {
		return err
	}
	page, err := c.Search(ctx, strings.Join(pos[1:], " "), registry.SearchOptions{Cursor: *cursor, All: *all})
	if err != nil {
		return registryError(c, err)
	}
	out := registrySearchJSON{Registry: c.URL(), Offline: page.Offline, CachedAt: page.CachedAt, Servers: []registryEntryJSON{}, NextCursor: page.Next}
	for _, en := range page.Entries {
		s := en.Server
		out.Servers = append(out.Servers, registryEntryJSON{Name: s.Name, Version: s.Version, Description: printable.Clip(s.Description, 200),
			Transports: nonNil(s.Transports()), NeedsSecret: s.NeedsSecret(), Status: en.Status()})
	}
	if page.Offline {
		fmt.Fprintf(e.stderr, "offline: the registry at %s does not answer (%v); showing its answer of %s\n",
			c.URL(), page.Why, page.CachedAt.Local().Format(time.DateTime))
	}
	if f.json {
		return writeJSON(e.stdout, out)
	}
	if len(out.Servers) == 0 {
		fmt.Fprintf(e.stderr, "no server in the registry at %s matches %q\n", c.URL(), strings.Join(pos[1:], " "))
	} else {
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tVERSION\tTRANSPORTS\tSECRET\tDESCRIPTION")
		for _, s := range out.Servers {
			secret := "-"
			if s.NeedsSecret {
				secret = "yes"
			}
			desc := printable.Clip(s.Description, 70)
			if s.Status != registry.StatusActive {
				desc = "(" + s.Status + ") " + desc
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, printable.Clip(s.Version, 30), orDash(strings.Join(s.Transports, ",")), secret, desc)
		}
		tw.Flush()
		fmt.Fprintln(e.stderr, "hint: switchboard add NAME adds one")
	}
	if page.Next != "" {
		fmt.Fprintf(e.stderr, "more: switchboard registry search %s --cursor %s\n", strings.Join(pos[1:], " "), shellQuote(page.Next))
	}
	return nil
}

// registryClient is the client of the registry the configuration names,
// with its answers kept in the cache directory.
func registryClient(cfg *config.Config) (*registry.Client, error) {
	return registry.New(cfg.Settings.Registry, &registry.Options{
		HTTPClient: &http.Client{Timeout: 30 * time.Second},
		CacheDir:   cfg.Dirs.CacheDir(),
	})
}

// registryError says what a registry failure means for the user.
func registryError(c *registry.Client, err error) error {
	switch {
	case errors.Is(err, registry.ErrOffline):
		return fmt.Errorf("%v, and no earlier answer to the same question is kept (hint: check your network, or settings.registry)", err)
	}
	return err
}
