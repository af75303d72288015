package config

import (
	"fmt"
	"slices"
)

// Migrating a host (switchboard setup HOST --migrate) turns off, in the
// host's own file, the servers Switchboard now serves, so that the host
// does not start them a second time beside Switchboard. Which ones those
// are is Switchboard's to decide, here; package hosts edits the file.

// A Kept server is one of a host's servers that a migration leaves on.
type Kept struct {
	Name string `json:"name"`
	Why  string `json:"why"`
}

// ServedFrom returns the names of the host's servers (imp, as ImportHost
// read them) that this configuration serves, and why each other server of
// the same name is kept on. A host's server is served when Switchboard
// defines a server of its name that is valid and enabled, does not come
// from an import of this very host (turning it off there would turn it off
// in Switchboard too), and starts the same command with the same arguments,
// or reaches the same URL. Servers Switchboard does not define at all are
// neither served nor listed.
func (c *Config) ServedFrom(imp *Import) (served []string, kept []Kept) {
	for _, h := range imp.Servers {
		ours, ok := c.Server(h.Name)
		if !ok {
			continue
		}
		if why := notServed(ours, h, imp.Host); why != "" {
			kept = append(kept, Kept{h.Name, why})
			continue
		}
		served = append(served, h.Name)
	}
	slices.Sort(served)
	return served, kept
}

// notServed says why ours does not stand in for the host's server h, or
// returns "".
func notServed(ours, h *Server, host string) string {
	switch {
	case ours.Source.Kind == KindImport && ours.Source.Host == host:
		return fmt.Sprintf("Switchboard reads it from %s's own file (imports), so turning it off there would turn it off in Switchboard too (hint: switchboard import --from %s copies it into Switchboard's file)", host, host)
	case ours.Err != nil:
		return "its definition in Switchboard cannot be used: " + ours.Err.Error()
	case ours.Disabled:
		return "it is disabled in Switchboard"
	case (ours.Type == TransportStdio) != (h.Type == TransportStdio):
		return "Switchboard's definition uses another transport"
	case ours.Type == TransportStdio && (ours.Command != h.Command || !slices.Equal(ours.Args, h.Args)):
		return "Switchboard's definition starts another command"
	case ours.Type != TransportStdio && ours.URL != h.URL:
		return "Switchboard's definition reaches another URL"
	}
	return ""
}
