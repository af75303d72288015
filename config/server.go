package config

import (
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Transport is how a server is reached.
type Transport string

// Transports. TransportHTTP is Streamable HTTP; TransportSSE is the legacy
// HTTP+SSE transport of the 2024-11-05 revision.
const (
	TransportStdio Transport = "stdio"
	TransportHTTP  Transport = "http"
	TransportSSE   Transport = "sse"
	// TransportSocket reaches a server that some other program runs, over
	// a Unix socket, in stdio's framing (newline-delimited JSON-RPC): a
	// multiplexer such as rmcp-mux shares one server among its clients.
	TransportSocket Transport = "socket"
)

// Lifecycle says when a server is connected and for how long.
type Lifecycle string

// Lifecycles; see DESIGN.md (Connections).
const (
	LifecycleLazy          Lifecycle = "lazy"
	LifecycleEager         Lifecycle = "eager"
	LifecycleKeepAlive     Lifecycle = "keep-alive"
	LifecycleLazyKeepAlive Lifecycle = "lazy-keep-alive"
)

// Defaults for fields left out of a definition and of settings.
const (
	DefaultIdleTimeout    = 10 * time.Minute
	DefaultRequestTimeout = 60 * time.Second
	DefaultOutputBytes    = 50 << 10
	DefaultOutputLines    = 2000
	DefaultScriptTimeout  = 30 * time.Second // settings.scriptTimeoutMs
)

// Reconnect configures automatic reconnection of a server.
type Reconnect struct {
	Automatic   bool
	MaxAttempts int           // 1-5; 0 means the default of 3
	BaseDelay   time.Duration // first backoff delay; 0 means 500ms
}

// Redirects says which redirects the requests to an HTTP server follow
// (docs/configuration.md, "Where credentials go").
type Redirects string

// Redirect rules. The empty Redirects is RedirectsSameOrigin.
const (
	// RedirectsSameOrigin follows a redirect within the origin (scheme,
	// host and port) of the server's URL only: a redirect to another
	// origin fails the request, and nothing is sent there.
	RedirectsSameOrigin Redirects = "same-origin"
	// RedirectsWithoutCredentials also follows a redirect to another
	// origin, without the server's headers, OAuth token or cookies.
	RedirectsWithoutCredentials Redirects = "follow-without-credentials"
)

// DirectTools selects tools that serve exposes as separate tools.
// The zero value exposes none.
type DirectTools struct {
	All   bool     // every tool of the server
	Names []string // original tool names or globs
	// OnDemand ("search"): no tool is a direct tool at first; one becomes
	// one when a search or a describe of the mcp tool shows it.
	OnDemand bool
}

// Set reports whether any tool is selected, or may be.
func (d DirectTools) Set() bool { return d.All || len(d.Names) > 0 || d.OnDemand }

// Server is one server definition as written in a file, after validation.
//
// Env, header and URL values hold the text of the file: references such as
// ${GITHUB_TOKEN} are kept as written and resolved only by [Server.Resolve],
// when the server connects. A literal that looks like a credential is
// replaced by [Redacted], and Err says where it was. A Server therefore never
// holds a secret value and is safe to print.
type Server struct {
	Name   string
	Source Source // the file (or host import) that defined it
	Path   string // JSON path of the definition in Source, e.g. mcpServers.github

	Type Transport
	// TypeInferred says that the definition has a "url" and no "type":
	// Type is TransportHTTP, and a server that rejects Streamable HTTP's
	// POST outright (HTTP 404, 405, 406 or 415) is tried over legacy SSE
	// (docs/configuration.md, "Transports"). A server whose type is
	// written, and one a Go host defines, is used as its Type says.
	TypeInferred bool
	Command      string
	Args         []string
	Cwd          string
	Env          map[string]string
	URL          string
	Socket       string // the Unix socket of a "socket" server: an absolute path
	// DataDir is a directory a stdio server's process is given, made
	// (0700) before it starts: an Agent Plugin's PLUGIN_DATA.
	DataDir string
	Headers map[string]string
	// Redirects says which redirects requests follow (HTTP servers);
	// "" is RedirectsSameOrigin.
	Redirects Redirects
	// PerUser, when set, says whether each signed-in user logs in to this
	// server with their own account (true) or all share one login (false),
	// when serve --http serves users (settings.identity); unset, it is
	// true for a server that logs in with OAuth (see UserCredentials).
	PerUser *bool

	Lifecycle       Lifecycle
	IdleTimeout     time.Duration // 0 never closes
	RequestTimeout  time.Duration
	Reconnect       Reconnect
	Disabled        bool
	IncludeTools    []string
	ExcludeTools    []string
	allowSet        bool     // settings.includeTools is set: allowTools is this server's part of it
	allowTools      []string // the globs settings.includeTools has for this server
	DirectTools     DirectTools
	ToolPrefix      string // "": settings.toolPrefix; else one of ToolPrefixes for this server's direct tools and prompts
	SearchKeywords  map[string][]string
	ProtocolVersion string    // "auto", "latest", "legacy" or an exact revision
	OAuth           *OAuth    // nil: the defaults (see config/oauth.go)
	Approve         *Approval // nil: settings.approve (see Config.ApprovalRule)
	Pin             PinMode   // "": settings.pin (see Config.PinModeOf)
	// Roots are what the server is offered when it asks for its roots:
	// the file's "roots", else settings.roots; nil offers none.
	Roots *Roots

	// DisabledBy names the file whose {"disabled": true} disabled a lower
	// definition; "" when the definition itself says disabled or is enabled.
	DisabledBy string

	// Offline says why the server is not started while Switchboard is
	// offline (settings.offline, --offline); "" when it may be, or when
	// Switchboard is online. What the catalog knows of it still answers.
	Offline string

	// Err is set when this definition cannot be used (for example a
	// credential written as a literal). It never holds a secret value.
	Err error

	// Revision tells apart definitions that no file can: a Go host sets it
	// to a digest of what it adds to the server (see Packaged), so that the
	// catalog indexes the server anew when that changes. Empty for the
	// servers of files.
	Revision string

	// stub marks a definition that is only {"disabled": true}: it disables
	// a lower definition and carries nothing else.
	stub      bool
	directSet bool // directTools was written, so settings.directTools does not apply
	idleSet   bool // idleTimeout was written, so settings.idleTimeout does not apply
	rootsSet  bool // roots was written, so settings.roots does not apply
	line, col int  // where the definition starts in Source (see Position)
}

// Position returns where the definition starts in its file, 1-based, or
// zeros when that is not known (a host import that is not JSON, a server
// no file defines).
func (s *Server) Position() (line, col int) { return s.line, s.col }

// String returns a one-line description with references as written.
func (s *Server) String() string {
	switch s.Type {
	case TransportInProcess:
		return fmt.Sprintf("%s: %s", s.Name, packagedTarget)
	case TransportStdio:
		return fmt.Sprintf("%s: stdio %s", s.Name, strings.Join(append([]string{s.Command}, s.Args...), " "))
	case TransportSocket:
		return fmt.Sprintf("%s: socket %s", s.Name, s.Socket)
	default:
		return fmt.Sprintf("%s: %s %s", s.Name, s.Type, redactURL(s.URL))
	}
}

// Target is the command line or URL of the server, for status displays.
// URLs lose their query string and user info, which often carry secrets.
func (s *Server) Target() string {
	if s.Type == TransportInProcess {
		return packagedTarget
	}
	if s.Type == TransportStdio {
		return strings.Join(append([]string{s.Command}, s.Args...), " ")
	}
	if s.Type == TransportSocket {
		return "unix:" + s.Socket
	}
	return redactURL(s.URL)
}

// ToolAllowed reports whether includeTools and excludeTools, and
// settings.includeTools, let a tool with this original name through.
func (s *Server) ToolAllowed(name string) bool {
	if len(s.IncludeTools) > 0 && !matchAny(s.IncludeTools, name) {
		return false
	}
	if s.allowSet && !matchAny(s.allowTools, name) {
		return false // settings.includeTools, deny by default
	}
	return !matchAny(s.ExcludeTools, name)
}

// Direct reports whether the tool with this original name is a direct tool.
func (s *Server) Direct(name string) bool {
	return s.DirectTools.All || matchAny(s.DirectTools.Names, name)
}

// Keywords returns the extra search words that searchKeywords gives the
// tool with this original name, sorted and without duplicates.
func (s *Server) Keywords(tool string) []string {
	var out []string
	for pattern, words := range s.SearchKeywords {
		if Glob(pattern, tool) {
			out = append(out, words...)
		}
	}
	sort.Strings(out)
	return compactStrings(out)
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if Glob(p, name) {
			return true
		}
	}
	return false
}

// Glob reports whether name matches pattern, where '*' matches any run of
// characters and '?' any one character. Unlike path.Match, '/' is not
// special: tool names are not paths.
func Glob(pattern, name string) bool {
	for len(pattern) > 0 {
		switch pattern[0] {
		case '*':
			pattern = strings.TrimLeft(pattern, "*")
			if pattern == "" {
				return true
			}
			for i := 0; i <= len(name); i++ {
				if Glob(pattern, name[i:]) {
					return true
				}
			}
			return false
		case '?':
			if name == "" {
				return false
			}
			_, size := utf8.DecodeRuneInString(name)
			pattern, name = pattern[1:], name[size:]
		default:
			if name == "" || pattern[0] != name[0] {
				return false
			}
			pattern, name = pattern[1:], name[1:]
		}
	}
	return name == ""
}

// ValidName reports whether name is a valid server name: 1 to 64 ASCII
// letters, digits, '_' or '-'. (A loop, not a regular expression: the
// repetition {1,64} compiles to 64 copies of the class, and every command
// checks the names it loads.)
func ValidName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func compactStrings(s []string) []string {
	if len(s) < 2 {
		return s
	}
	out := s[:1]
	for _, v := range s[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// redactURL drops the user info, query and fragment of a URL.
func redactURL(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i] + "?…"
	}
	if scheme, rest, ok := strings.Cut(u, "://"); ok {
		if at := strings.IndexByte(rest, '@'); at >= 0 && at < strings.IndexAny(rest+"/", "/") {
			u = scheme + "://…@" + rest[at+1:]
		}
	}
	return u
}
