package config

import (
	"fmt"
	"slices"
	"strings"
)

// TransportInProcess is how a packaged server is reached: a Go host ships
// it in its own binary and Switchboard connects it in memory. No file can
// define one.
const TransportInProcess Transport = "in-process"

// KindPackaged is the source of the servers a Go host packages with its
// binary (switchboard.Options.Servers).
const KindPackaged Kind = "packaged"

// packagedTarget is what status and errors say of where a packaged server
// comes from.
const packagedTarget = "packaged by the host"

// PackagedSource is the Source of every packaged server.
var PackagedSource = Source{Kind: KindPackaged, Path: packagedTarget}

// Packaged reports whether a Go host packaged the server with its binary.
// Such a server is usable even when the configuration fails closed: no file
// can disable or replace it, so a broken file cannot have meant to.
func (s *Server) Packaged() bool { return s.Source.Kind == KindPackaged }

// WithPackaged returns a copy of c that holds the servers a Go host
// packages with its binary besides the configured ones. Each must have a
// valid name and TransportInProcess. A configuration cannot replace,
// shadow or disable a packaged server: a configured server of the same name
// (or one whose definition was too broken to keep) is an error that names
// both. c itself is not changed.
func (c *Config) WithPackaged(servers []*Server) (*Config, error) {
	out := *c
	out.Servers = slices.Clone(c.Servers)
	seen := map[string]bool{}
	for _, s := range servers {
		switch {
		case !ValidName(s.Name):
			return nil, fmt.Errorf("packaged server %q: invalid name: use 1 to 64 letters, digits, '-' or '_'", s.Name)
		case seen[s.Name]:
			return nil, fmt.Errorf("packaged server %q: the host packages two servers of that name", s.Name)
		case s.Type != TransportInProcess || !s.Packaged():
			return nil, fmt.Errorf("packaged server %q: not an in-process server packaged by the host: this is a bug", s.Name)
		}
		seen[s.Name] = true
		if where := c.definedAt(s.Name); where != "" {
			return nil, fmt.Errorf("server %q is %s and also configured at %s: a configuration cannot replace a packaged server (hint: rename or remove the configured one)", s.Name, packagedTarget, where)
		}
		out.Servers = append(out.Servers, s)
	}
	slices.SortFunc(out.Servers, func(a, b *Server) int { return strings.Compare(a.Name, b.Name) })
	return &out, nil
}

// definedAt returns where the configuration defines name, as
// file:line:col (JSON path), or "" when it does not.
func (c *Config) definedAt(name string) string {
	if s, ok := c.Server(name); ok {
		where := s.Source.String()
		if line, col := s.Position(); line > 0 {
			where += fmt.Sprintf(":%d:%d", line, col)
		}
		if s.Path != "" {
			where += " (" + s.Path + ")"
		}
		if s.DisabledBy != "" {
			where += ", disabled by " + s.DisabledBy
		}
		return where
	}
	for _, p := range c.Errors() {
		if p.Server == name {
			return p.Error()
		}
	}
	return ""
}
