package config

// Host importers (package hosts) read another host's MCP settings,
// read-only, and normalize each server entry to our own schema (the value
// of an mcpServers object). importServers then validates the result with the tolerant rules of shared
// files, so names, transports, references and the rule that credentials are
// references are checked in one place for every host. Where each host keeps
// its servers, and how its entries differ from ours, is written down in the
// host configuration reference, HOSTS.md.

import (
	"sort"
	"strings"

	"github.com/switchboard-mcp/switchboard/config/hosts"
)

// add validates the entries of f and adds the usable servers and every
// problem to imp. Problems name the host's file, server and field.
func (imp *Import) add(f *hosts.File) {
	if f.Read {
		imp.Files = append(imp.Files, f.Path)
	}
	problems := make([]Problem, 0, len(f.Problems))
	for _, p := range f.Problems {
		problems = append(problems, Problem{Severity: SeverityWarning, File: p.File, Line: p.Line, Col: p.Col,
			Path: p.Path, Server: p.Server, Message: p.Message})
	}
	if imp.opts.MoveSecrets {
		for _, e := range f.Entries {
			if !e.Skip {
				imp.moveSecrets(e)
			}
		}
	}
	defs := map[string]any{}
	byName := map[string]*hosts.Entry{}
	for _, e := range f.Entries {
		if !e.Skip {
			defs[e.Name] = e.Def
			byName[e.Name] = e
		}
	}
	if len(defs) > 0 {
		servers, probs := importServers(Source{Kind: KindImport, Path: f.Path, Host: imp.Host}, defs)
		for _, p := range probs {
			problems = append(problems, rehome(p, byName))
		}
		for _, s := range servers {
			s.Path = byName[s.Name].Path
		}
		imp.Servers = append(imp.Servers, servers...)
	}
	sort.SliceStable(problems, func(i, j int) bool { return problems[i].Server < problems[j].Server })
	imp.Problems = append(imp.Problems, problems...)
}

// rehome moves a problem found in the normalized definitions back to the
// entry of the host file it came from.
func rehome(p Problem, byName map[string]*hosts.Entry) Problem {
	rest, ok := strings.CutPrefix(p.Path, "mcpServers.")
	if !ok {
		return p
	}
	var e *hosts.Entry
	for name, cand := range byName {
		if hosts.Under(rest, name) && (e == nil || len(name) > len(e.Name)) {
			e = cand
		}
	}
	if e == nil {
		return p
	}
	p.Server = e.Name
	p.Path = e.HostPath(strings.TrimPrefix(rest[len(e.Name):], "."))
	return p
}
