// Package config finds, parses, merges and validates Switchboard's
// configuration: the MCP server definitions of a user and a project, the
// global settings, references to secrets in the environment and the
// credential store, project trust,
// and read-only imports of other hosts' MCP settings.
//
// The package reads no environment variable and no working directory of its
// own: callers describe the machine with [Dirs] and pass a lookup function to
// [Server.Resolve], so everything here is hermetic and testable.
//
// Definitions come from six sources, lowest precedence first:
//
//  1. $XDG_CONFIG_HOME/mcp/mcp.json (shared, user-global)
//  2. ~/.agents/mcp.json, then ~/.agents/mcp/mcp.json (shared, user-global)
//  3. $XDG_CONFIG_HOME/switchboard/config.json (ours, user-global)
//  4. <project>/.mcp.json (shared, project)
//  5. <project>/.switchboard/config.json (ours, project)
//  6. an explicit file (--config or SWITCHBOARD_CONFIG; ours)
//
// Host imports sit below all of them. A higher definition of a server
// replaces the whole lower one. Project files count only once the project is
// trusted, for the exact definitions that were trusted.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/config/hosts"
)

// Dirs describes where configuration lives on this machine. Callers fill it
// from the real environment (see FromEnv); tests fill it by hand.
//
// Switchboard's own files follow the XDG layout on every platform, Windows
// included (%USERPROFILE%\.config\switchboard), as opencode, Codex and
// Gemini CLI keep theirs in the home directory there too; the hosts' files
// are where each host puts them on each platform (hostpaths.go).
type Dirs struct {
	Home       string // the user's home directory: $HOME; %USERPROFILE% on Windows
	ConfigHome string // $XDG_CONFIG_HOME; default Home/.config
	StateHome  string // $XDG_STATE_HOME; default Home/.local/state
	CacheHome  string // $XDG_CACHE_HOME; default Home/.cache
	Project    string // the project directory; empty for none
	Explicit   string // --config FILE or $SWITCHBOARD_CONFIG; empty for none
	CodexHome  string // $CODEX_HOME; default Home/.codex
	GOOS       string // "linux", "darwin", "windows"; default linux
	// AppData and LocalAppData are Windows's per-user application-data
	// folders, %APPDATA% and %LOCALAPPDATA%; on Windows they default to
	// Home\AppData\Roaming and Home\AppData\Local, elsewhere they are
	// unused.
	AppData      string
	LocalAppData string
	Self         Self // the running Switchboard, which imports skip
}

// FromEnv fills Dirs from environment variables read through getenv and the
// working directory cwd. The project directory is the nearest directory at or
// above cwd, below the home directory, that holds .mcp.json or .switchboard;
// failing that, cwd itself.
func FromEnv(getenv func(string) string, cwd, goos string) Dirs {
	home := HomeDir(goos, getenv)
	d := Dirs{
		Home:       home,
		ConfigHome: getenv("XDG_CONFIG_HOME"),
		StateHome:  getenv("XDG_STATE_HOME"),
		CacheHome:  getenv("XDG_CACHE_HOME"),
		Explicit:   getenv("SWITCHBOARD_CONFIG"),
		CodexHome:  getenv("CODEX_HOME"),
		GOOS:       goos,
		Project:    findProject(cwd, home),
	}
	if goos == "windows" {
		d.AppData, d.LocalAppData = getenv("APPDATA"), getenv("LOCALAPPDATA")
	}
	return d.withDefaults()
}

func findProject(cwd, home string) string {
	if cwd == "" {
		return ""
	}
	cwd = filepath.Clean(cwd)
	if home != "" {
		home = filepath.Clean(home) // HOME=/home/me/ still stops the walk at home
	}
	for dir := cwd; ; {
		if home != "" && samePath(dir, home) {
			break
		}
		for _, marker := range []string{".mcp.json", ".switchboard"} {
			if _, err := os.Stat(filepath.Join(dir, marker)); err == nil {
				return dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return cwd
}

// withDefaults fills the empty fields from Home: those the hosts' files
// are found under as hosts.Dirs.WithDefaults fills them, then our own
// state and cache.
func (d Dirs) withDefaults() Dirs {
	h := d.Hosts()
	d.GOOS, d.ConfigHome, d.CodexHome, d.AppData, d.LocalAppData = h.GOOS, h.ConfigHome, h.CodexHome, h.AppData, h.LocalAppData
	if d.StateHome == "" {
		d.StateHome = d.join(d.Home, ".local", "state")
	}
	if d.CacheHome == "" {
		d.CacheHome = d.join(d.Home, ".cache")
	}
	return d
}

// UserFile is our user-global configuration file.
func (d Dirs) UserFile() string {
	d = d.withDefaults()
	return d.join(d.ConfigHome, "switchboard", "config.json")
}

// ProjectFile is our project configuration file, or "" without a project.
func (d Dirs) ProjectFile() string {
	if d.Project == "" {
		return ""
	}
	return d.join(d.Project, ".switchboard", "config.json")
}

// StateDir is where Switchboard keeps user-global state such as trust.
func (d Dirs) StateDir() string {
	d = d.withDefaults()
	return d.join(d.StateHome, "switchboard")
}

// CacheDir is where Switchboard keeps its catalog.
func (d Dirs) CacheDir() string {
	d = d.withDefaults()
	return d.join(d.CacheHome, "switchboard")
}

// Kind names a configuration source.
type Kind string

// Source kinds, lowest precedence first.
const (
	KindImport        Kind = "import"         // another host's file, read-only
	KindShared        Kind = "shared"         // $XDG_CONFIG_HOME/mcp/mcp.json
	KindAgents        Kind = "agents"         // ~/.agents/mcp.json and ~/.agents/mcp/mcp.json
	KindUser          Kind = "user"           // ours, user-global
	KindProjectShared Kind = "project-shared" // <project>/.mcp.json
	KindProject       Kind = "project"        // <project>/.switchboard/config.json
	KindExplicit      Kind = "explicit"       // --config / SWITCHBOARD_CONFIG
)

// Source is one place definitions come from.
type Source struct {
	Kind Kind
	Path string
	Host string // the host's name, for KindImport
	// Plugin is the plugin's name, for KindPlugin, whose Path is the
	// mcp.json at the plugin's root.
	Plugin string
}

// Ours reports whether the file is Switchboard's own: strict, and the only
// kind of file Switchboard writes.
func (s Source) Ours() bool {
	return s.Kind == KindUser || s.Kind == KindProject || s.Kind == KindExplicit
}

// InProject reports whether the file belongs to the project and so needs trust.
func (s Source) InProject() bool { return s.Kind == KindProjectShared || s.Kind == KindProject }

func (s Source) String() string {
	if s.Kind == KindImport {
		return fmt.Sprintf("%s (import from %s)", s.Path, s.Host)
	}
	if s.Kind == KindPlugin {
		return fmt.Sprintf("%s (plugin %s)", s.Path, s.Plugin)
	}
	return s.Path
}

// Sources lists the files Switchboard reads, lowest precedence first,
// whether or not they exist. Imports are not listed: they depend on settings.
func (d Dirs) Sources() []Source {
	d = d.withDefaults()
	src := []Source{
		{Kind: KindShared, Path: d.join(d.ConfigHome, "mcp", "mcp.json")},
		{Kind: KindAgents, Path: d.join(d.Home, ".agents", "mcp.json")},
		{Kind: KindAgents, Path: d.join(d.Home, ".agents", "mcp", "mcp.json")},
		{Kind: KindUser, Path: d.UserFile()},
	}
	if d.Project != "" {
		src = append(src,
			Source{Kind: KindProjectShared, Path: d.join(d.Project, ".mcp.json")},
			Source{Kind: KindProject, Path: d.ProjectFile()})
	}
	if d.Explicit != "" {
		src = append(src, Source{Kind: KindExplicit, Path: d.Explicit})
	}
	return src
}

// FileState says what became of a source.
type FileState string

// File states.
const (
	FileLoaded  FileState = "loaded"
	FileMissing FileState = "missing"
	FileIgnored FileState = "ignored" // a project file of an untrusted project
	FileInvalid FileState = "invalid" // did not parse or violates the schema
)

// File reports what was read from one source.
type File struct {
	Source
	State   FileState
	Servers []string // names defined there, in file order
}

// Severity grades a problem.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Problem is one error or warning about a file. It never holds a secret
// value. Its JSON is a problem of serve's /admin/status (front.AdminStatus).
type Problem struct {
	Severity Severity `json:"severity"`
	File     string   `json:"file"`
	Line     int      `json:"line,omitempty"`   // 1-based; 0 when unknown
	Col      int      `json:"col,omitempty"`    // 1-based; 0 when unknown
	Path     string   `json:"path,omitempty"`   // JSON path such as mcpServers.github.env; "" for the file
	Server   string   `json:"server,omitempty"` // the server concerned, if any
	Message  string   `json:"message"`
}

// Error formats the problem as file:line:col: path: message, as a host
// file's problems are.
func (p Problem) Error() string {
	return hosts.Problem{File: p.File, Line: p.Line, Col: p.Col, Path: p.Path, Message: p.Message}.Error()
}

// Project describes the project directory and its trust.
type Project struct {
	Dir     string
	Files   []string // project files that exist
	Hash    string   // hash of their definitions and settings
	Trusted bool     // trusted for exactly this hash
	Changed bool     // trusted once, but the definitions changed since
}

// Settings are the global settings, merged from our own files.
type Settings struct {
	ToolPrefix string // "server" (default), "short", "none" or "mcp" (see ToolPrefixes)
	// FreezeDirectTools keeps the direct tools a client was first offered:
	// later connects, reconnects and list changes do not add, change or
	// remove one (settings.freezeDirectTools, for hosts that cache the
	// prompt).
	FreezeDirectTools bool
	// NoAppTools (settings.appTools: false) keeps serve from registering a
	// server's tools that have an MCP Apps UI (_meta.ui.resourceUri) as
	// direct tools for a client that claims the UI extension: they are
	// then reached only through the mcp tool, and no host renders them.
	NoAppTools bool
	// ScriptMode offers the mcpScript tool beside the mcp tool: code mode,
	// where an agent sends one JavaScript program that searches, calls and
	// combines tools, and only its answer enters the context
	// (settings.scriptMode; docs/codemode.md). Off by default.
	ScriptMode bool
	// ScriptTimeout bounds one script's run, its inner calls included
	// (settings.scriptTimeoutMs); 0 is DefaultScriptTimeout.
	ScriptTimeout time.Duration
	// Trace, when set, has serve write a trace file per client session
	// (settings.trace; see Trace).
	Trace          *Trace
	IdleTimeout    time.Duration
	RequestTimeout time.Duration
	Output         Output
	DirectTools    bool // default for servers that do not set directTools
	Imports        []string
	Embeddings     *Embeddings
	// CredentialStore names where ${secret:NAME} references and OAuth
	// tokens are kept: "keychain", "encrypted-file", "file" (unencrypted),
	// or "" for the default (see credstore.Open).
	CredentialStore string
	// CredentialStoreKey references the key of the "encrypted-file"
	// store: ${VAR}, ${cmd:…} or !COMMAND, never a value; "" is
	// DefaultCredentialKey (see CredentialKey).
	CredentialStoreKey string

	// Policy (config/policy.go, docs/policy.md).
	Approve Approval
	Pin     PinMode // "" is PinOn
	Audit   Audit
	Offline bool

	// Store, when set, is the database replicas share (docs/team.md).
	Store *Store
	// Identity, when set, makes serve --http an OAuth resource server:
	// users sign in with the team's authorization server (docs/team.md).
	Identity *Identity

	// Telemetry says where serve sends traces; the standard
	// OTEL_EXPORTER_OTLP_* variables win over it.
	Telemetry Telemetry

	// Roots are the roots of servers that do not set their own (see
	// Roots); nil offers none. "~" is not yet expanded here: a server's
	// Roots has it expanded.
	Roots *Roots

	// AgentPluginPaths are the Agent Plugins directories whose mcp.json
	// servers are loaded (settings.agentPluginPaths; see KindPlugin),
	// absolute or starting with "~/", lowest precedence first.
	AgentPluginPaths []string

	// Strict refuses every server that is not defined in Switchboard's
	// own files (the user's, the project's .switchboard/, --config): the
	// shared and tool-agnostic files and other hosts' imports are closed.
	Strict bool
	// AllowTools, when not nil, is an allow list of tools across servers
	// (settings.includeTools, written mcp__SERVER__GLOB as terret-mcp and
	// orchestrators write them): by server name, the globs of its tools
	// that may be used. A server it does not name has none (deny by
	// default).
	AllowTools map[string][]string

	// Registry is the base URL of the MCP registry that add, update and
	// registry search ask (settings.registry); "" is the official one.
	Registry string
	// HostConfigs is "read" to read the servers of every host whose files
	// exist, as if each were in imports (settings.hostConfigs); "" or
	// "import" leaves them to switchboard import.
	HostConfigs string
}

// Telemetry is settings.telemetry.
type Telemetry struct {
	// Endpoint is the base URL of an OTLP/HTTP receiver, such as
	// http://127.0.0.1:4318 (spans go to its /v1/traces).
	Endpoint string
}

// Output bounds every model-visible result.
type Output struct {
	MaxBytes int
	MaxLines int
	// Unbounded turns the bound off ("output": false), for a host that
	// bounds what reaches its model itself: results pass whole, and nothing
	// is spilled for its size (images pass inline; audio and blobs still go
	// to files). Network reads and messages stay bounded.
	Unbounded bool
}

// Limits returns the bytes and lines a result may have: math.MaxInt each
// when Unbounded.
func (o Output) Limits() (maxBytes, maxLines int) {
	if o.Unbounded {
		return math.MaxInt, math.MaxInt
	}
	return o.MaxBytes, o.MaxLines
}

// Embeddings points at an OpenAI-compatible /v1/embeddings endpoint.
// APIKey holds a reference such as ${OPENAI_API_KEY}, never a value.
type Embeddings struct {
	BaseURL string
	APIKey  string
	Model   string
}

// DefaultSettings returns the settings used where no file sets them.
func DefaultSettings() Settings {
	return Settings{
		ToolPrefix:     "server",
		IdleTimeout:    DefaultIdleTimeout,
		RequestTimeout: DefaultRequestTimeout,
		Output:         Output{MaxBytes: DefaultOutputBytes, MaxLines: DefaultOutputLines},
	}
}

// Config is the effective configuration.
type Config struct {
	Dirs     Dirs
	Files    []File    // every source considered, lowest precedence first
	Servers  []*Server // effective definitions, sorted by name; disabled ones included
	Settings Settings
	Problems []Problem // errors and warnings, in the order found
	Project  Project

	err   error     // set when the configuration fails closed
	hosts hostReads // the hosts' files read before the trust decision
}

// ErrInvalid is matched by the error of a configuration that failed closed.
var ErrInvalid = errors.New("configuration is invalid")

// Err returns a non-nil error, matching ErrInvalid, when a file that counts
// does not parse or violates the schema. No server may then be used: the
// broken file might have meant to disable one.
func (c *Config) Err() error { return c.err }

// Errors returns the problems of severity error.
func (c *Config) Errors() []Problem { return c.problems(SeverityError) }

// Warnings returns the problems of severity warning.
func (c *Config) Warnings() []Problem { return c.problems(SeverityWarning) }

func (c *Config) problems(s Severity) []Problem {
	var out []Problem
	for _, p := range c.Problems {
		if p.Severity == s {
			out = append(out, p)
		}
	}
	return out
}

// Server returns the effective definition named name, disabled or not.
func (c *Config) Server(name string) (*Server, bool) {
	i, ok := slices.BinarySearchFunc(c.Servers, name, func(s *Server, n string) int { return cmp.Compare(s.Name, n) })
	if !ok {
		return nil, false
	}
	return c.Servers[i], true
}

// Names returns the names of all servers that are not disabled.
func (c *Config) Names() []string {
	var out []string
	for _, s := range c.Servers {
		if !s.Disabled {
			out = append(out, s.Name)
		}
	}
	return out
}

// ErrUnknownServer is matched by the error of Usable for a name that is not
// configured.
var ErrUnknownServer = errors.New("unknown server")

// ErrDisabled is matched by the error of Usable for a disabled server.
var ErrDisabled = errors.New("server is disabled")

// Usable returns the definition of a server that may be connected, or an
// error that says why not and what to do.
func (c *Config) Usable(name string) (*Server, error) {
	s, ok := c.Server(name)
	if c.err != nil && !(ok && s.Packaged()) {
		return nil, c.err
	}
	if !ok {
		names := c.Names()
		if len(names) == 0 {
			return nil, fmt.Errorf("%w %q: no servers are configured (hint: switchboard add NAME -- COMMAND ARGS…)", ErrUnknownServer, name)
		}
		return nil, fmt.Errorf("%w %q: configured servers are %s", ErrUnknownServer, name, strings.Join(names, ", "))
	}
	if s.Disabled {
		return nil, fmt.Errorf("server %q: %w (hint: switchboard enable %s)", name, ErrDisabled, name)
	}
	if s.Err != nil {
		return nil, s.Err
	}
	return s, nil
}
