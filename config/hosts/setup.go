package hosts

// Setup mounts Switchboard in another MCP host by adding one server entry to
// the host's own user-scope configuration file.
//
// With the migration (migrate.go) and Undo (undo.go), this is the only
// code in Switchboard that writes a file that is not Switchboard's own, and
// it does so only when a person runs `switchboard setup HOST --write`.
// Importers, and everything else, read host files and never change them.
//
// A write changes exactly one entry (mcpServers.NAME, servers.NAME,
// mcp.NAME, mcp.servers.NAME or [mcp_servers.NAME]) and keeps every other
// byte: JSON and JSONC files are edited on their syntax tree, as our own
// files are (internal/jsonc), and Codex's TOML is appended to, or has that
// one table replaced, as text (toml.go). The file is backed up first, written atomically,
// then read back and checked. Where each host keeps its servers, and what
// an entry looks like, is in the host configuration reference, HOSTS.md.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// DefaultSetupName is the server name Switchboard is mounted under.
const DefaultSetupName = "switchboard"

// SetupOptions says how a host reaches Switchboard.
type SetupOptions struct {
	Name string // the server name in the host; default DefaultSetupName
	// Command is the switchboard executable, run as "Command serve". It
	// should be an absolute path: a host started from a desktop may not see
	// the shell's PATH.
	Command string
	// URL is Switchboard's Streamable HTTP endpoint (switchboard serve
	// --http). When set, the host connects there instead of starting
	// Command.
	URL string
	// Journal is the file where writes are recorded for Undo; "" records
	// nothing.
	Journal string
}

// SetupState says what the host's file holds under the name.
type SetupState string

// Setup states.
const (
	SetupNoFile    SetupState = "no-file"   // the file does not exist: a write creates it
	SetupAbsent    SetupState = "absent"    // the file does not define the name
	SetupSame      SetupState = "same"      // it defines the name as the snippet does: already set up
	SetupDifferent SetupState = "different" // it defines the name otherwise
	SetupInvalid   SetupState = "invalid"   // it cannot be read or parsed; Setup.Err says why
)

// Setup is what mounting Switchboard in one host takes: the file, the entry
// to add to it, and what the file holds now. [PlanSetup] makes one and
// changes nothing; [Setup.Write] changes the file, and is the only function
// in Switchboard that writes a file of another program.
type Setup struct {
	Host  string // e.g. "claude-code"
	Title string // e.g. "Claude Code"
	File  string // the host's user-scope file
	Key   string // where the host keeps its servers: mcpServers, servers, mcp, mcp.servers or mcp_servers
	Name  string
	// Snippet is the text that mounts Switchboard: the entry inside its
	// key, in the file's own format, ready to merge into the file.
	Snippet string
	// HostCommand is the host's own command line that adds the same entry
	// (claude, codex, gemini, code, opencode), or nil.
	HostCommand []string
	State       SetupState
	Err         error // why the file cannot be changed, when State is SetupInvalid

	toml    bool
	journal string
	keys    []string      // the path of the servers object or table
	entry   snippetObject // the entry
	data    []byte        // the file as read
}

// Exists reports whether the file already defines the name.
func (s *Setup) Exists() bool { return s.State == SetupSame || s.State == SetupDifferent }

// setupHost describes how to mount Switchboard in one host (HOSTS.md §3).
type setupHost struct {
	title string
	// files lists where the entry may go, the default first; a write uses
	// the one that defines the name already, else the first that exists.
	files  func(Dirs) []string
	keys   func(root map[string]any) []string // nil: mcpServers
	toml   bool
	stdio  func(command string) snippetObject
	remote func(url string) snippetObject // nil: the host cannot take a URL in its file
	cli    func(name, command, url string) []string
}

func oneFile(f func(Dirs) string) func(Dirs) []string {
	return func(d Dirs) []string { return []string{f(d)} }
}

func serveEntry(command string) snippetObject {
	return snippetObject{{"command", command}, {"args", []string{"serve"}}}
}

func typed(typ string, rest snippetObject) snippetObject {
	return append(snippetObject{{"type", typ}}, rest...)
}

var setupHosts = map[string]*setupHost{
	"claude-code": {
		title: "Claude Code", files: oneFile(Dirs.claudeCodeConfig),
		// What claude mcp add --scope user writes, env included.
		stdio: func(c string) snippetObject {
			return typed("stdio", append(serveEntry(c), snippetField{"env", snippetObject{}}))
		},
		remote: func(u string) snippetObject { return snippetObject{{"type", "http"}, {"url", u}} },
		cli: func(name, c, u string) []string {
			if u != "" {
				return []string{"claude", "mcp", "add", "--scope", "user", "--transport", "http", name, u}
			}
			return []string{"claude", "mcp", "add", "--scope", "user", "--transport", "stdio", name, "--", c, "serve"}
		},
	},
	"claude-desktop": {
		title: "Claude Desktop", files: oneFile(Dirs.claudeDesktopConfig),
		stdio: serveEntry, // remote servers are Connectors, added in its settings
	},
	"cursor": {
		title: "Cursor", files: oneFile(Dirs.cursorConfig),
		stdio:  func(c string) snippetObject { return typed("stdio", serveEntry(c)) },
		remote: func(u string) snippetObject { return snippetObject{{"url", u}} },
	},
	"vscode": {
		title: "VS Code", files: func(d Dirs) []string { return []string{d.join(d.vscodeUserDir(), "mcp.json")} },
		keys:   func(map[string]any) []string { return []string{"servers"} },
		stdio:  func(c string) snippetObject { return typed("stdio", serveEntry(c)) },
		remote: func(u string) snippetObject { return snippetObject{{"type", "http"}, {"url", u}} },
		cli: func(name, c, u string) []string {
			def := append(snippetObject{{"name", name}}, typed("stdio", serveEntry(c))...)
			if u != "" {
				def = snippetObject{{"name", name}, {"type", "http"}, {"url", u}}
			}
			text, _ := json.Marshal(def)
			return []string{"code", "--add-mcp", string(text)}
		},
	},
	"windsurf": {
		title: "Windsurf", files: oneFile(Dirs.windsurfConfig),
		stdio: serveEntry,
		// One report has url failing where serverUrl worked (HOSTS.md).
		remote: func(u string) snippetObject { return snippetObject{{"serverUrl", u}} },
	},
	"codex": {
		title: "Codex", files: oneFile(Dirs.codexConfig), toml: true,
		stdio:  serveEntry,
		remote: func(u string) snippetObject { return snippetObject{{"url", u}} },
		cli: func(name, c, u string) []string {
			if u != "" {
				return []string{"codex", "mcp", "add", name, "--url", u}
			}
			return []string{"codex", "mcp", "add", name, "--", c, "serve"}
		},
	},
	"opencode": {
		title: "opencode",
		files: func(d Dirs) []string {
			return []string{d.join(d.opencodeDir(), "opencode.json"), d.join(d.opencodeDir(), "opencode.jsonc")}
		},
		keys: opencodeKeys,
		stdio: func(c string) snippetObject {
			return snippetObject{{"type", "local"}, {"command", []string{c, "serve"}}}
		},
		// oauth: false stops opencode from trying OAuth discovery on a 401.
		remote: func(u string) snippetObject { return snippetObject{{"type", "remote"}, {"url", u}, {"oauth", false}} },
		cli: func(name, c, u string) []string {
			if u != "" {
				return []string{"opencode", "mcp", "add", name, "--global", "--url", u}
			}
			return []string{"opencode", "mcp", "add", name, "--global", "--", c, "serve"}
		},
	},
	"gemini": {
		title: "Gemini CLI", files: oneFile(Dirs.geminiSettings),
		stdio: serveEntry,
		// httpUrl also works on releases that predate url + type.
		remote: func(u string) snippetObject { return snippetObject{{"httpUrl", u}} },
		cli: func(name, c, u string) []string {
			if u != "" {
				return []string{"gemini", "mcp", "add", "--scope", "user", "--transport", "http", name, u}
			}
			return []string{"gemini", "mcp", "add", "--scope", "user", name, c, "serve"}
		},
	},
}

// opencodeKeys follows the file: V2 keeps servers in mcp.servers, V1 (the
// default) directly in mcp.
func opencodeKeys(root map[string]any) []string {
	if mcp, ok := root["mcp"].(map[string]any); ok {
		if servers, ok := mcp["servers"].(map[string]any); ok && opencodeV2(servers) {
			return []string{"mcp", "servers"}
		}
	}
	return []string{"mcp"}
}

// PlanSetup works out how to mount Switchboard in host and reads the host's
// file to see whether it is there already. It changes nothing. An error
// means there is nothing to show: an unknown host, a bad name or URL, or a
// host that cannot take a URL in its file.
func PlanSetup(d Dirs, host string, opts SetupOptions) (*Setup, error) {
	d = d.WithDefaults()
	h, ok := setupHosts[host]
	if !ok {
		return nil, fmt.Errorf("unknown host %q: use one of %s", host, strings.Join(Names(), ", "))
	}
	name := cmp.Or(opts.Name, DefaultSetupName)
	if !validName(name) {
		return nil, fmt.Errorf("invalid server name %q: use 1 to 64 letters, digits, '-' or '_'", name)
	}
	var entry snippetObject
	switch {
	case opts.URL != "" && h.remote == nil:
		return nil, fmt.Errorf("%s cannot reach a server by URL from its configuration file (it adds remote servers as Connectors, in its settings) (hint: leave out --http: %s starts switchboard serve itself)", h.title, h.title)
	case opts.URL != "":
		if err := checkSetupURL(opts.URL); err != nil {
			return nil, err
		}
		entry = h.remote(opts.URL)
	case opts.Command == "":
		return nil, errors.New("no switchboard command to run")
	default:
		entry = h.stdio(opts.Command)
	}
	var plans []*Setup
	for _, path := range h.files(d) {
		s := h.plan(path, name, entry)
		s.Host, s.journal = host, opts.Journal
		if h.cli != nil {
			s.HostCommand = h.cli(name, opts.Command, opts.URL)
		}
		plans = append(plans, s)
	}
	return choosePlan(plans), nil
}

// choosePlan picks the file that defines the name already, else the first
// that exists, else the first.
func choosePlan(plans []*Setup) *Setup {
	for _, s := range plans {
		if s.Exists() {
			return s
		}
	}
	for _, s := range plans {
		if s.State != SetupNoFile {
			return s
		}
	}
	return plans[0]
}

func checkSetupURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("invalid URL %q: use Switchboard's endpoint, such as http://127.0.0.1:8931/mcp", raw)
	}
	return nil
}

// plan reads one candidate file and describes the change to it.
func (h *setupHost) plan(path, name string, entry snippetObject) *Setup {
	s := &Setup{Title: h.title, File: path, Name: name, toml: h.toml, entry: entry, keys: []string{"mcpServers"}}
	if h.toml {
		s.keys = []string{"mcp_servers"}
	}
	root := map[string]any{}
	data, err := readFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.State = SetupNoFile
	case err != nil:
		s.fail(fmt.Errorf("cannot read %s: %w", path, unwrapPath(err)))
	default:
		s.data = data
		if root, err = s.decode(data); err != nil {
			s.fail(err)
		}
	}
	if h.keys != nil && root != nil {
		s.keys = h.keys(root)
	}
	if s.State == "" {
		s.State = s.stateIn(root)
	}
	s.Key = strings.Join(s.keys, ".")
	s.Snippet = s.snippet()
	return s
}

func (s *Setup) fail(err error) { s.State, s.Err = SetupInvalid, err }

// decode parses the file's content. An empty file holds nothing yet.
func (s *Setup) decode(data []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, nil
	}
	if s.toml {
		var root map[string]any
		if _, err := toml.Decode(string(data), &root); err != nil {
			line, col, msg := tomlError(err) // the message never quotes the text
			return nil, &Problem{File: s.File, Line: line, Col: col, Message: "invalid TOML: " + msg}
		}
		return root, nil
	}
	root, p := parseJSON(s.File, data)
	if p != nil {
		return nil, p // the message never quotes the text
	}
	return root, nil
}

// stateIn says whether root defines the name, and how.
func (s *Setup) stateIn(root map[string]any) SetupState {
	obj := root
	for i, k := range s.keys {
		v, ok := obj[k]
		if !ok {
			return SetupAbsent
		}
		if obj, ok = v.(map[string]any); !ok {
			what := "an object"
			if s.toml {
				what = "a table"
			}
			s.fail(fmt.Errorf("%s: %s must be %s, not %s", s.File, strings.Join(s.keys[:i+1], "."), what, kindOf(v)))
			return SetupInvalid
		}
	}
	v, ok := obj[s.Name]
	switch {
	case !ok:
		return SetupAbsent
	case reflect.DeepEqual(v, s.entry.value()):
		return SetupSame
	}
	return SetupDifferent
}

// snippet renders the entry inside its key, in the file's format.
func (s *Setup) snippet() string {
	if s.toml {
		return tomlTable(s.keys[0], s.Name, s.entry)
	}
	var v any = snippetObject{{s.Name, s.entry}}
	for i := len(s.keys) - 1; i >= 0; i-- {
		v = snippetObject{{s.keys[i], v}}
	}
	text, _ := json.MarshalIndent(v, "", "  ")
	return string(text) + "\n"
}
