package config

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
