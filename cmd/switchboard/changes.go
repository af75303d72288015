package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard-mcp/switchboard/config"
)

// changeJSON is the stable --json shape of add, remove, enable and
// disable: the file written, and how the server stands afterwards.
type changeJSON struct {
	Action string `json:"action"` // added, removed, enabled or disabled
	Server string `json:"server"`
	File   string `json:"file"`  // the file written
	Scope  string `json:"scope"` // global or project
	// State is the server's state now, as status says it (enabled,
	// disabled, invalid, blocked), or ignored (defined only in a project
	// that is not trusted), or absent (defined nowhere).
	State  string `json:"state"`
	Source string `json:"source,omitempty"` // the file whose definition counts
}

// change describes a write that succeeded, reading the configuration again
// to say how the server now stands.
func change(d config.Dirs, action, name, path string, sc config.Scope) changeJSON {
	out := changeJSON{Action: action, Server: name, File: path, Scope: string(sc), State: "absent"}
	c := config.Load(d)
	if s, ok := c.Server(name); ok {
		out.State, out.Source = serverState(c, s), s.Source.Path
		return out
	}
	for _, f := range c.Files {
		if f.State == config.FileIgnored && slices.Contains(f.Servers, name) {
			out.State, out.Source = "ignored", f.Path
		}
	}
	return out
}

// trustJSON is the stable --json shape of trust.
type trustJSON struct {
	Project string          `json:"project"`
	Trusted bool            `json:"trusted"`           // after the command
	Revoked bool            `json:"revoked,omitempty"` // --revoke took trust away (false: there was none)
	Files   []trustFileJSON `json:"files"`             // the project files trusted
}

type trustFileJSON struct {
	Path    string   `json:"path"`
	Servers []string `json:"servers"`
}

// versionJSON is the stable --json shape of version.
type versionJSON struct {
	Version string `json:"version"`
	Go      string `json:"go"`
}

// serverList lists server names for a person: "2 servers (a, b)".
func serverList(list []string) string {
	if len(list) == 0 {
		return "no servers"
	}
	return fmt.Sprintf("%s (%s)", count(len(list), "server", "servers"), strings.Join(list, ", "))
}
