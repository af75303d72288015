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
// valid name and TransportInProcess. A packaged server wins over a
// configured server of the same name, which is left out (shadowed): a
// file cannot replace, or disable, what the host ships, and the user can
// see why their entry is not used, in a warning that names both (status
// shows it). c itself is not changed.
func (c *Config) WithPackaged(servers []*Server) (*Config, error) {
	out := *c
	out.Servers = slices.Clone(c.Servers)
	out.Problems = slices.Clone(c.Problems)
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
		if configured, ok := c.Server(s.Name); ok {
			out.Servers = slices.DeleteFunc(out.Servers, func(x *Server) bool { return x == configured })
			line, col := configured.Position()
			out.Problems = append(out.Problems, Problem{Severity: SeverityWarning, File: configured.Source.Path, Line: line, Col: col,
				Path: configured.Path, Server: s.Name,
				Message: fmt.Sprintf("shadowed: the host packages a server named %q with its binary, and that one is used, not this definition (hint: rename this one to use it too)", s.Name)})
		}
		out.Servers = append(out.Servers, s)
	}
	slices.SortFunc(out.Servers, func(a, b *Server) int { return strings.Compare(a.Name, b.Name) })
	return &out, nil
}
