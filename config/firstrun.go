package config

import (
	"fmt"
	"strings"
)

// HostServers is another host whose own files define MCP servers.
type HostServers struct {
	Host    string
	Files   []string
	Servers []string
}

// OtherHosts lists the hosts whose own files define servers (Switchboard
// itself left out), in HostNames order: what a first run offers to import.
// It reads those hosts' files; callers ask only when they have no server.
func OtherHosts(d Dirs) []HostServers {
	var out []HostServers
	for _, host := range HostNames() {
		imp := ImportHost(d, host)
		if len(imp.Servers) == 0 {
			continue
		}
		hs := HostServers{Host: host, Files: imp.Files}
		for _, s := range imp.Servers {
			hs.Servers = append(hs.Servers, s.Name)
		}
		out = append(out, hs)
	}
	return out
}

// ImportCommand is the command that brings a host's servers into
// Switchboard's own configuration.
func ImportCommand(host string) string { return "switchboard import --from " + host + " --write" }

// FirstRun is what every face of a first run (status, search, tools, the
// panel) says when no server is configured but other hosts define some:
// each host with how many servers it holds, and the exact command that
// brings each host's over. It is nil when found is empty.
func FirstRun(found []HostServers) []string {
	if len(found) == 0 {
		return nil
	}
	lines := []string{"Other hosts define MCP servers that Switchboard does not use yet:"}
	for _, h := range found {
		noun := "servers"
		if len(h.Servers) == 1 {
			noun = "server"
		}
		lines = append(lines, fmt.Sprintf("  %s: %d %s (%s)", h.Host, len(h.Servers), noun, strings.Join(h.Servers, ", ")))
	}
	lines = append(lines, "hint: bring them over with:")
	for _, h := range found {
		lines = append(lines, "  "+ImportCommand(h.Host))
	}
	return append(lines, `or set "settings": {"hostConfigs": "read"} to read them where they are`)
}
