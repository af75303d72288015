package config

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"sort"
	"strings"

	"github.com/switchboard-mcp/switchboard/config/hosts"
	"github.com/switchboard-mcp/switchboard/internal/samefile"
)

// Import is what was read from one host's own MCP settings.
type Import struct {
	Host     string
	Files    []string  // the host files that exist and were read
	Servers  []*Server // valid definitions, in a stable order
	Problems []Problem // warnings: an import never fails the configuration
	// Moved lists, with ImportOptions.MoveSecrets, the literal credentials
	// of Servers that their definitions now refer to as ${secret:NAME}: the
	// caller stores them before it writes a definition.
	Moved []MovedSecret

	opts ImportOptions
}

// ImportOptions changes what ImportHostWith does.
type ImportOptions struct {
	// MoveSecrets replaces each literal credential of a host's entry, the
	// kind validation refuses, with a reference to a stored secret,
	// ${secret:NAME}, and lists it in Import.Moved. See MovedSecret.
	MoveSecrets bool
}

// HostNames lists the hosts Switchboard imports from, sorted.
func HostNames() []string { return hosts.Names() }

// Hosts returns the directories the other hosts' files are found in.
func (d Dirs) Hosts() hosts.Dirs {
	return hosts.Dirs{GOOS: d.GOOS, Home: d.Home, ConfigHome: d.ConfigHome, CodexHome: d.CodexHome,
		AppData: d.AppData, LocalAppData: d.LocalAppData}.WithDefaults()
}

// ImportHost reads a host's MCP server definitions, read-only. An unknown
// host yields an Import with one warning.
func ImportHost(d Dirs, host string) *Import { return ImportHostWith(d, host, ImportOptions{}) }

// ImportHostWith is ImportHost with options.
func ImportHostWith(d Dirs, host string, opts ImportOptions) *Import {
	d = d.withDefaults()
	files, err := hosts.Read(d.Hosts(), host)
	if err != nil {
		return &Import{Host: host, Problems: []Problem{{Severity: SeverityWarning, File: host, Message: err.Error()}}}
	}
	imp := &Import{Host: host, opts: opts}
	for _, f := range files {
		imp.add(f)
	}
	imp.skipSelf(d.Self)
	imp.keepMoved()
	return imp
}

// Self identifies the running Switchboard. A host that mounts Switchboard
// (switchboard setup writes such entries) lists it among its servers;
// imported, that entry would make the gateway list, start or call itself,
// so imports skip it. The zero value recognizes the command by its name.
type Self struct {
	// Executable is the path of the running binary; "" when unknown. A
	// host entry whose command is this file is Switchboard, whatever its
	// name.
	Executable string
	// Addr is the HOST:PORT that serve --http listens on; "" when not
	// serving HTTP. A host entry whose URL reaches it is Switchboard.
	Addr string
}

// skipSelf drops the servers that are Switchboard itself, with a warning
// for each that says why.
func (imp *Import) skipSelf(self Self) {
	kept := imp.Servers[:0]
	for _, s := range imp.Servers {
		why := self.recognize(s)
		if why == "" {
			kept = append(kept, s)
			continue
		}
		imp.Problems = append(imp.Problems, Problem{Severity: SeverityWarning, File: s.Source.Path, Path: s.Path, Server: s.Name,
			Message: "skipped: " + why + ", and a gateway must not list itself"})
	}
	imp.Servers = kept
}

// recognize says how s is this Switchboard, or returns "" when it is not:
// a command named switchboard whose first argument is serve, the running
// binary, or the address that serve --http listens on.
func (self Self) recognize(s *Server) string {
	if s.Type != TransportStdio {
		if self.Addr != "" && reaches(s.URL, self.Addr) {
			return fmt.Sprintf("%s is the address this switchboard serves", redactURL(s.URL))
		}
		return ""
	}
	name := s.Command[strings.LastIndexAny(s.Command, `/\`)+1:]
	if n := strings.TrimSuffix(strings.ToLower(name), ".exe"); n == "switchboard" && len(s.Args) > 0 && s.Args[0] == "serve" {
		return fmt.Sprintf("%q starts Switchboard itself", s.Command+" serve")
	}
	if self.Executable != "" && filepath.IsAbs(s.Command) && samefile.Is(s.Command, self.Executable) {
		return fmt.Sprintf("%s is the running switchboard binary", s.Command)
	}
	return ""
}

// reaches reports whether a URL as written (references unresolved: it
// cannot tell then) reaches addr, a listening HOST:PORT: the same port, and
// the same host or a loopback one where addr is loopback or every interface.
func reaches(raw, addr string) bool {
	if refs, err := parseRefs(raw); err != nil || len(refs) > 0 {
		return false
	}
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	uport := u.Port()
	if uport == "" {
		uport = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if uport != port {
		return false
	}
	uhost := u.Hostname()
	if strings.EqualFold(uhost, host) {
		return true
	}
	return loopback(uhost) && (loopback(host) || unspecified(host))
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func unspecified(host string) bool {
	ip := net.ParseIP(host)
	return host == "" || (ip != nil && ip.IsUnspecified())
}

// importServers validates definitions a host importer has normalized to our
// own schema (the value of an mcpServers object) with the tolerant rules of
// shared files. Definitions with errors are skipped with a warning that names
// the host file; the rest are returned sorted by name.
func importServers(src Source, defs map[string]any) ([]*Server, []Problem) {
	data, err := json.Marshal(map[string]any{"mcpServers": defs})
	if err != nil {
		return nil, []Problem{{Severity: SeverityWarning, File: src.Path, Message: "cannot import: " + err.Error()}}
	}
	doc, probs, _ := decodeFile(src, data)
	bad := map[string]bool{}
	for i := range probs {
		probs[i].Line, probs[i].Col = 0, 0 // positions in the normalized text mean nothing to a person
		if probs[i].Severity == SeverityError {
			bad[probs[i].Server] = true
			probs[i].Severity = SeverityWarning
			probs[i].Message += " (server skipped)"
		}
	}
	var out []*Server
	if doc != nil {
		for _, s := range doc.servers {
			if !bad[s.Name] {
				out = append(out, s)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, probs
}
