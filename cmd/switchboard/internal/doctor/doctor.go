// Package doctor finds why Switchboard or one of its servers will not work:
// configuration files that do not parse, references to variables and
// secrets that are not set, commands that are not on PATH, hosts that mount
// Switchboard and still load its servers themselves, directories that
// cannot be written, a damaged catalog, and (on request) servers that do
// not connect. Each finding says what is wrong, where, and the command or
// edit that fixes it. It never shows a variable's or a secret's value.
package doctor

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/switchboard-mcp/switchboard/config"
	"github.com/switchboard-mcp/switchboard/credstore"
)

// Severity ranks a finding.
type Severity string

// Severities. Any error makes doctor exit 1.
const (
	OK      Severity = "ok"
	Info    Severity = "info"
	Warning Severity = "warning"
	Error   Severity = "error"
)

// Checks, as Finding.Check names them.
const (
	CheckConfig    = "config"
	CheckReference = "reference"
	CheckCommand   = "command"
	CheckHost      = "host"
	CheckDuplicate = "duplicate"
	CheckDirectory = "directory"
	CheckCatalog   = "catalog"
	CheckConnect   = "connect"
	CheckStore     = "store"
	CheckCredStore = "credentials"
)

// Finding is one result of a check.
type Finding struct {
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	Server   string   `json:"server,omitempty"`
	What     string   `json:"what"`
	Where    string   `json:"where,omitempty"` // a file, file:line:col, or file and JSON path
	Fix      string   `json:"fix,omitempty"`   // the command or edit that fixes it
}

// Options says what to check.
type Options struct {
	Config *config.Config
	// LookupEnv reads the environment serve would start with: references
	// and PATH. Default: nothing is set.
	LookupEnv func(string) (string, bool)
	// Secrets is the credential store ${secret:NAME} references read.
	Secrets credstore.Store
	// Store is what opening settings.store's shared database gave; nil
	// without settings.store.
	Store *StoreState
	// Credentials is the local credential store, without settings.store;
	// nil: not reported.
	Credentials *CredentialState
	// SpillDir and CatalogPath are where the CLI keeps spill files and the
	// catalog.
	SpillDir, CatalogPath string
	// Connect connects each usable server, in parallel, each within
	// ConnectTimeout (default 30s).
	Connect        bool
	ConnectTimeout time.Duration
	// Version runs "path --version" for a command that is cheap to ask,
	// and returns its first line; nil for the default, which runs it with a
	// short timeout.
	Version func(ctx context.Context, path string) string
	// SetupCommand is the command switchboard setup would write into a
	// host's file, to tell a host's entry as setup writes it from one of
	// its own. Default "switchboard".
	SetupCommand string
	// Pretty shortens a path for display (~/…). Default: as it is.
	Pretty func(string) string
}

// CredentialState says which local credential store is in use (the one
// settings.credentialStore names, without settings.store).
type CredentialState struct {
	Where string // credstore.Describe: "encrypted file store in DIR"
	Why   string // how the default was chosen; "" for a named store
	// Unencrypted is the directory where the file store keeps values
	// unencrypted; "" for any other store.
	Unencrypted string
	Err         error // why it cannot be opened
}

// checkCredentials says which credential store is in use, and flags the
// unencrypted file store.
func checkCredentials(o Options) []Finding {
	c := o.Credentials
	switch {
	case c == nil:
		return nil
	case c.Err != nil:
		return []Finding{{Check: CheckCredStore, Severity: Error,
			What: "the credential store cannot be opened, so no ${secret:NAME} resolves and no server logs in with OAuth: " + c.Err.Error(),
			Fix:  "fix what the error names (docs/configuration.md, The credential store)"}}
	}
	what := "credential store: " + c.Where
	if c.Why != "" {
		what += " (the default: " + c.Why + ")"
	}
	if c.Unencrypted != "" {
		return []Finding{{Check: CheckCredStore, Severity: Warning,
			What: what + ": secrets and OAuth tokens are kept unencrypted, readable by whoever can read " + o.Pretty(c.Unencrypted),
			Fix:  credstore.EncryptHint}}
	}
	return []Finding{{Check: CheckCredStore, Severity: OK, What: what}}
}

// StoreState says where the shared store of settings.store is and
// whether it answers.
type StoreState struct {
	Where  string // "PostgreSQL store (database D on HOST:PORT)"; never a password
	Schema string // each component's schema version: "catalog 1, credentials 1"
	Err    error  // why it cannot be used
}

// checkStore reports whether the shared store answers.
func checkStore(o Options) []Finding {
	st := o.Store
	switch {
	case st == nil:
		return nil
	case st.Err != nil:
		return []Finding{{Check: CheckStore, Severity: Error,
			What: "the shared store (settings.store) cannot be used, so nothing that needs the catalog or a credential works: " + st.Err.Error(),
			Fix:  "fix what the error names (docs/configuration.md, Shared store); switchboard status shows the store again"}}
	}
	what := "shared store: " + st.Where + ", answers"
	if st.Schema != "" {
		what += " (schema versions: " + st.Schema + ")"
	}
	return []Finding{{Check: CheckStore, Severity: OK, What: what}}
}

// Run runs every check and returns the findings, errors first.
func Run(ctx context.Context, o Options) []Finding {
	if o.LookupEnv == nil {
		o.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if o.Pretty == nil {
		o.Pretty = func(p string) string { return p }
	}
	if o.Version == nil {
		o.Version = runVersion
	}
	var out []Finding
	out = append(out, checkConfig(o)...)
	out = append(out, checkStore(o)...)
	out = append(out, checkCredentials(o)...)
	out = append(out, checkReferences(o)...)
	out = append(out, checkCommands(ctx, o)...)
	out = append(out, checkHosts(o)...)
	out = append(out, checkDirectories(o)...)
	out = append(out, checkCatalog(ctx, o)...)
	if o.Connect {
		out = append(out, checkConnect(ctx, o)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i].Severity) > rank(out[j].Severity) })
	return out
}

func rank(s Severity) int {
	switch s {
	case Error:
		return 3
	case Warning:
		return 2
	case Info:
		return 1
	}
	return 0
}

// Count returns how many findings have the severity.
func Count(fs []Finding, s Severity) int {
	n := 0
	for _, f := range fs {
		if f.Severity == s {
			n++
		}
	}
	return n
}

// usable returns the servers serve would connect: enabled and valid.
func usable(cfg *config.Config) []*config.Server {
	var out []*config.Server
	for _, s := range cfg.Servers {
		if !s.Disabled && s.Err == nil {
			out = append(out, s)
		}
	}
	return out
}

// where names a server's definition: its file and JSON path.
func (o Options) where(s *config.Server, path string) string {
	if path == "" {
		path = s.Path
	}
	return fmt.Sprintf("%s %s", o.Pretty(s.Source.Path), path)
}

// checkConfig reports each configuration problem, with file:line:col.
func checkConfig(o Options) []Finding {
	var out []Finding
	for _, p := range o.Config.Problems {
		sev := Warning
		if p.Severity == config.SeverityError {
			sev = Error
		}
		where := o.Pretty(p.File)
		if p.Line > 0 {
			where = fmt.Sprintf("%s:%d:%d", where, p.Line, p.Col)
		}
		if p.Path != "" {
			where += " " + p.Path
		}
		out = append(out, Finding{Check: CheckConfig, Severity: sev, Server: p.Server, What: p.Message, Where: where,
			Fix: "edit " + o.Pretty(p.File) + " there; switchboard config validate checks it again"})
	}
	if len(out) == 0 {
		var loaded int
		for _, f := range o.Config.Files {
			if f.State == config.FileLoaded {
				loaded++
			}
		}
		out = append(out, Finding{Check: CheckConfig, Severity: OK,
			What: fmt.Sprintf("%d configuration files read, %d servers defined, no problems", loaded, len(o.Config.Servers))})
	}
	return out
}

// checkReferences reports each ${VAR} and ${secret:NAME} a usable server
// refers to that is not set (or empty) and has no default.
func checkReferences(o Options) []Finding {
	var out []Finding
	var n int
	for _, s := range usable(o.Config) {
		for _, r := range s.ReferenceList() {
			n++
			if r.Default {
				continue
			}
			if !r.Secret {
				if v, _ := o.LookupEnv(r.Name); v == "" {
					out = append(out, Finding{Check: CheckReference, Severity: Error, Server: s.Name,
						What:  fmt.Sprintf("server %q refers to ${%s}, which is not set in this environment", s.Name, r.Name),
						Where: o.where(s, r.Path),
						Fix:   fmt.Sprintf("set %s in the environment serve starts with (a host started from the desktop does not see your shell's), or store it: switchboard secret set %s, and write ${secret:%s}", r.Name, r.Name, r.Name)})
				}
				continue
			}
			out = append(out, secretFinding(o, s, r)...)
		}
	}
	if len(out) == 0 {
		out = append(out, Finding{Check: CheckReference, Severity: OK, What: fmt.Sprintf("%d references, all set", n)})
	}
	return out
}

func secretFinding(o Options, s *config.Server, r config.Reference) []Finding {
	f := Finding{Check: CheckReference, Severity: Error, Server: s.Name, Where: o.where(s, r.Path),
		Fix: "switchboard secret set " + r.Name}
	if o.Secrets == nil {
		f.What = fmt.Sprintf("server %q refers to ${secret:%s}, and there is no credential store", s.Name, r.Name)
		return []Finding{f}
	}
	v, ok, err := o.Secrets.Get(credstore.SecretKey(r.Name))
	switch {
	case err != nil:
		f.What = fmt.Sprintf("server %q refers to ${secret:%s}, and the credential store (%s) cannot be read: %v", s.Name, r.Name, o.Secrets.Name(), err)
		f.Fix = "see docs/configuration.md (The credential store): on a machine without a keychain, set settings.credentialStore to \"encrypted-file\""
		if o.Store != nil {
			f.Fix = "see the store finding, and docs/configuration.md (Shared store)"
		}
	case !ok || len(v) == 0:
		f.What = fmt.Sprintf("server %q refers to ${secret:%s}, which is not in the credential store (%s)", s.Name, r.Name, o.Secrets.Name())
	default:
		return nil
	}
	return []Finding{f}
}
