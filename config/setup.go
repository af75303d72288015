package config

// Setup mounts Switchboard in another MCP host by adding one server entry to
// the host's own user-scope configuration file.
//
// This is the only code in Switchboard that writes a file that is not
// Switchboard's own, and it does so only when a person runs
// `switchboard setup HOST --write`. Importers, and everything else, read
// host files and never change them.
//
// A write changes exactly one entry (mcpServers.NAME, servers.NAME,
// mcp.NAME, mcp.servers.NAME or [mcp_servers.NAME]) and keeps every other
// byte: JSON and JSONC files are edited on their syntax tree, as our own
// files are (jsonedit.go), and Codex's TOML is appended to, or has that one
// table replaced, as text. The file is backed up first, written atomically,
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
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/switchboard-mcp/switchboard/internal/jsonc"
	"github.com/tailscale/hujson"
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

	toml  bool
	keys  []string      // the path of the servers object or table
	entry snippetObject // the entry
	data  []byte        // the file as read
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
	d = d.withDefaults()
	h, ok := setupHosts[host]
	if !ok {
		return nil, fmt.Errorf("unknown host %q: use one of %s", host, strings.Join(HostNames(), ", "))
	}
	name := cmp.Or(opts.Name, DefaultSetupName)
	if !ValidName(name) {
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
		s.Host = host
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
	data, err := readHostFile(path)
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

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// decode parses the file's content. An empty file holds nothing yet.
func (s *Setup) decode(data []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return map[string]any{}, nil
	}
	if s.toml {
		var root map[string]any
		if _, err := toml.Decode(string(data), &root); err != nil {
			line, col, msg := tomlError(err) // the message never quotes the text
			p := Problem{File: s.File, Line: line, Col: col, Message: "invalid TOML: " + msg}
			return nil, errors.New(p.Error())
		}
		return root, nil
	}
	v, err := jsonc.Parse(bytes.Clone(data)) // the tree shares the buffer, and Standardize writes to it
	if err != nil {
		_, probs, _ := decodeFile(Source{Kind: KindImport, Path: s.File}, data)
		return nil, errors.New(firstError(probs)) // the message never quotes the text
	}
	v.Standardize()
	dec := json.NewDecoder(bytes.NewReader(v.Pack()))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("%s: invalid JSON: %v", s.File, err)
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: the file must hold an object, not %s", s.File, kindOf(root))
	}
	return obj, nil
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

// Write adds the entry to the host's file. It is the one place Switchboard
// writes a file that is not its own: call it only when a person asked for
// it, as switchboard setup HOST --write does.
//
// A missing file is created, and its directory, private. An existing file
// is first copied to FILE.switchboard-backup-<UTC time>, with its mode;
// then only the one entry changes, every other byte stays (~/.claude.json
// also holds Claude Code's accounts, caches and per-project state), and the
// result is written atomically, read back and checked. Write refuses,
// changing nothing, when the file cannot be read or parsed, when it changed
// since it was planned, or when it defines the name otherwise, unless force
// is set. A file that is already set up is not written: written is false.
func (s *Setup) Write(force bool, now time.Time) (written bool, backup string, err error) {
	switch {
	case s.State == SetupInvalid:
		return false, "", fmt.Errorf("%v; not changing it (hint: fix it, or add the snippet by hand)", s.Err)
	case s.State == SetupSame:
		return false, "", nil
	case s.State == SetupDifferent && !force:
		return false, "", fmt.Errorf("%s already defines %q otherwise (hint: remove it from the file, or pass --force to replace it; the file is backed up first)", s.File, s.Name)
	}
	out, err := s.edit()
	if err != nil {
		return false, "", fmt.Errorf("not changing %s: %w", s.File, err)
	}
	if err := s.check(out); err != nil {
		return false, "", fmt.Errorf("not changing %s: the result would be wrong: %w (hint: add the snippet by hand)", s.File, err)
	}
	target, err := s.target()
	if err != nil {
		return false, "", err
	}
	if s.State == SetupNoFile {
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return false, "", fmt.Errorf("creating %s: %w", filepath.Dir(target), err)
		}
	} else if backup, err = s.backup(target, now); err != nil {
		return false, "", err
	}
	if err := writeAtomic(target, out, 0o600); err != nil {
		return false, backup, err
	}
	if err := s.readBack(target, out); err != nil {
		return true, backup, fmt.Errorf("wrote %s, but %v (the file as it was is in %s)", s.File, err, cmp.Or(backup, "no backup: it was new"))
	}
	return true, backup, nil
}

// target returns the file to replace: a symbolic link (dotfile managers use
// them) is followed, so that the link stays. It refuses a file that
// changed, or appeared, since it was planned: the host may be running.
func (s *Setup) target() (string, error) {
	target := s.File
	if s.State != SetupNoFile {
		if t, err := filepath.EvalSymlinks(s.File); err == nil {
			target = t
		}
	}
	data, err := readHostFile(target)
	switch {
	case s.State == SetupNoFile && errors.Is(err, fs.ErrNotExist):
		return target, nil
	case err == nil && s.State != SetupNoFile && bytes.Equal(data, s.data):
		return target, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("not changing %s: %w", s.File, unwrapPath(err))
	}
	return "", fmt.Errorf("not changing %s: it changed while setup ran (hint: run setup again; if %s is running, its own command may be safer)", s.File, s.Title)
}

// backup copies the file as read to FILE.switchboard-backup-<UTC time>,
// with the mode of target, never replacing an earlier backup.
func (s *Setup) backup(target string, now time.Time) (string, error) {
	st, err := os.Stat(target)
	if err != nil {
		return "", fmt.Errorf("backing up %s: %w", s.File, unwrapPath(err))
	}
	base := s.File + ".switchboard-backup-" + now.UTC().Format("20060102T150405Z")
	for i := 1; ; i++ {
		path := base
		if i > 1 {
			path = fmt.Sprintf("%s-%d", base, i)
		}
		err := writeNew(path, s.data, st.Mode().Perm())
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("backing up %s: %w", s.File, err)
		}
		return path, nil
	}
}

// writeNew writes data to path, which must not exist, with mode perm.
func writeNew(path string, data []byte, perm os.FileMode) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(path)
		}
	}()
	if err = f.Chmod(perm); err != nil { // whatever the umask
		f.Close()
		return err
	}
	if _, err = f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err = f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readBack reads the written file again and checks it.
func (s *Setup) readBack(target string, want []byte) error {
	got, err := readHostFile(target)
	if err != nil {
		return fmt.Errorf("it cannot be read back: %v", unwrapPath(err))
	}
	if !bytes.Equal(got, want) {
		return errors.New("it reads back otherwise (another program may have written it)")
	}
	return s.check(got)
}

// check verifies out: it parses, defines the name as the entry, and differs
// from the file as read in nothing else. A file that was strict JSON stays
// strict JSON.
func (s *Setup) check(out []byte) error {
	after, err := s.decode(out)
	if err != nil {
		return err
	}
	before := map[string]any{}
	if s.data != nil {
		if before, err = s.decode(s.data); err != nil {
			return err
		}
	}
	if got := lookup(after, append(slices.Clone(s.keys), s.Name)); !reflect.DeepEqual(got, s.entry.value()) {
		return fmt.Errorf("%s.%s does not hold the entry", s.Key, s.Name)
	}
	if !reflect.DeepEqual(without(before, s.keys, s.Name), without(after, s.keys, s.Name)) {
		return errors.New("other settings would change")
	}
	if !s.toml && json.Valid(bytes.TrimSpace(s.data)) && !json.Valid(out) {
		return errors.New("the file would no longer be strict JSON")
	}
	return nil
}

func lookup(root map[string]any, keys []string) any {
	var v any = root
	for _, k := range keys {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[k]
	}
	return v
}

// without returns a copy of root without name in the object at keys, and
// without the objects on the way there that this leaves empty.
func without(root map[string]any, keys []string, name string) map[string]any {
	if len(keys) == 0 {
		out := make(map[string]any, len(root))
		for k, v := range root {
			if k != name {
				out[k] = v
			}
		}
		return out
	}
	inner, ok := root[keys[0]].(map[string]any)
	if !ok {
		return root
	}
	out := make(map[string]any, len(root))
	for k, v := range root {
		out[k] = v
	}
	if rest := without(inner, keys[1:], name); len(rest) > 0 {
		out[keys[0]] = rest
	} else {
		delete(out, keys[0])
	}
	return out
}

// edit returns the file's new content.
func (s *Setup) edit() ([]byte, error) {
	if len(bytes.TrimSpace(s.data)) == 0 {
		return []byte(s.Snippet), nil
	}
	if s.toml {
		if s.State == SetupDifferent {
			return replaceTOMLTable(s.data, s.keys[0], s.Name, s.Snippet)
		}
		return appendTOML(s.data, s.keys[0], s.Snippet)
	}
	return s.editJSON()
}

// editJSON sets the entry on the file's syntax tree, creating the objects
// on the way that are missing.
func (s *Setup) editJSON() ([]byte, error) {
	root, err := jsonc.Parse(bytes.Clone(s.data))
	if err != nil {
		return nil, err
	}
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil, errors.New("the file must hold an object")
	}
	indent := ""
	for i, k := range s.keys {
		j := jsonc.MemberIndex(obj, k)
		if j < 0 {
			var v any = snippetObject{{s.Name, s.entry}}
			for n := len(s.keys) - 1; n > i; n-- {
				v = snippetObject{{s.keys[n], v}}
			}
			if err := jsonc.SetMember(obj, k, v, indent); err != nil {
				return nil, err
			}
			return root.Pack(), nil
		}
		indent = jsonc.IndentOf(&obj.Members[j])
		if obj, ok = obj.Members[j].Value.Value.(*hujson.Object); !ok {
			return nil, fmt.Errorf("%s must be an object", strings.Join(s.keys[:i+1], "."))
		}
	}
	if err := jsonc.SetMember(obj, s.Name, s.entry, indent); err != nil {
		return nil, err
	}
	return root.Pack(), nil
}

// snippetObject is a JSON object whose members keep their order, so entries
// read as the hosts' own documentation writes them.
type snippetObject []snippetField

type snippetField struct {
	key string
	val any
}

// MarshalJSON writes the members in order.
func (o snippetObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.val)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// value returns the object as a parser returns it: maps, []any, strings,
// bools and json.Number.
func (o snippetObject) value() any {
	data, _ := json.Marshal(o)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	_ = dec.Decode(&v)
	return v
}

// tomlTable renders the entry as the table [key.name]. Names are bare keys
// (ValidName); values are strings, lists of strings and booleans.
func tomlTable(key, name string, entry snippetObject) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s.%s]\n", key, name)
	for _, f := range entry {
		fmt.Fprintf(&b, "%s = %s\n", f.key, tomlValue(f.val))
	}
	return b.String()
}

func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return tomlString(v)
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = tomlString(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case bool:
		return fmt.Sprint(v)
	}
	panic(fmt.Sprintf("config: no TOML form for %T", v)) // the host table holds no other kind
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// appendTOML adds table, a sub-table of key, at the end of data, after a
// blank line. An inline table cannot be extended so: TOML forbids it, even
// where a lenient parser accepts it.
func appendTOML(data []byte, key, table string) ([]byte, error) {
	var root map[string]any
	md, err := toml.Decode(string(data), &root)
	if err != nil {
		return nil, err
	}
	header := slices.ContainsFunc(tomlBlocks(data), func(b tomlBlock) bool { return slices.Equal(b.key, []string{key}) })
	assigned := slices.ContainsFunc(md.Keys(), func(k toml.Key) bool { return slices.Equal(k, toml.Key{key}) })
	if assigned && !header { // only "key = {…}" lists the key itself without a [key] header
		return nil, fmt.Errorf("%s is an inline table, which a [%s.NAME] table cannot extend (hint: add the entry inside it by hand)", key, key)
	}
	out := slices.Clone(data)
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	if !bytes.HasSuffix(out, []byte("\n\n")) {
		out = append(out, '\n')
	}
	return append(out, table...), nil
}

// replaceTOMLTable replaces the table [key.name], and the tables under it,
// with table. It refuses a definition that is not written as such a table
// (an inline table, dotted keys). Blank and comment lines that end a table
// stay: they usually introduce what follows.
func replaceTOMLTable(data []byte, key, name, table string) ([]byte, error) {
	var blocks []tomlBlock
	own := false
	for _, b := range tomlBlocks(data) {
		if len(b.key) >= 2 && b.key[0] == key && b.key[1] == name {
			blocks = append(blocks, b)
			own = own || (len(b.key) == 2 && !b.array)
		}
	}
	if !own {
		return nil, fmt.Errorf("%s.%s is not written as a [%s.%s] table (hint: remove it by hand and run setup again)", key, name, key, name)
	}
	out := slices.Clone(data)
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		if i == 0 {
			out = slices.Concat(out[:b.start], []byte(table), out[b.end:])
			break
		}
		// A sub-table goes with the blank lines before it.
		start := b.start
		for start > 0 {
			prev := lineStart0(data, start-1)
			if len(bytes.TrimSpace(data[prev:start])) > 0 {
				break
			}
			start = prev
		}
		out = slices.Concat(out[:start], out[b.end:])
	}
	return out, nil
}

// tomlBlock is a table header and the key/value lines after it, up to the
// last line that holds more than blanks and comments.
type tomlBlock struct {
	start, end int      // byte offsets: the header line's start, the end of the last content line
	key        []string // the header's key
	array      bool     // [[key]]
}

// tomlBlocks finds the table headers of a TOML document and the extent of
// each table's content. A header is a line that starts with '[' outside any
// value: strings, comments and multi-line arrays are skipped, so a '[' at
// the start of a line inside them is not one.
func tomlBlocks(data []byte) []tomlBlock {
	var blocks []tomlBlock
	closeBlock := func(last int) {
		if n := len(blocks); n > 0 {
			blocks[n-1].end = lineEnd(data, max(last, blocks[n-1].end-1))
		}
	}
	last := 0 // offset of the last content byte
	depth, lineStart := 0, true
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case lineStart && depth == 0 && (c == ' ' || c == '\t' || c == '\r'):
			i++
		case lineStart && depth == 0 && c == '[':
			closeBlock(last)
			end := lineEnd(data, i)
			blocks = append(blocks, tomlHeader(data, lineStart0(data, i), end))
			last, i = end-1, end
		case c == '\n':
			lineStart = true
			i++
		case c == '#':
			lineStart = false
			i = lineEnd(data, i) - 1 // stop before the line break
			if i < 0 || data[i] != '\n' {
				i = len(data)
			}
		case c == '"' || c == '\'':
			lineStart = false
			i = skipTOMLString(data, i)
			last = i - 1
		default:
			lineStart = false
			switch c {
			case '[', '{':
				depth++
			case ']', '}':
				depth = max(depth-1, 0)
			}
			last = i
			i++
		}
	}
	closeBlock(last)
	return blocks
}

// lineStart0 returns the offset where the line holding i starts.
func lineStart0(data []byte, i int) int { return bytes.LastIndexByte(data[:i], '\n') + 1 }

// lineEnd returns the offset just after the line break that ends the line
// holding i, or len(data).
func lineEnd(data []byte, i int) int {
	if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(data)
}

// tomlHeader reads the key of the header line data[start:end].
func tomlHeader(data []byte, start, end int) tomlBlock {
	b := tomlBlock{start: start, end: end}
	line := strings.TrimSpace(string(data[start:end]))
	b.array = strings.HasPrefix(line, "[[")
	var root map[string]any
	if md, err := toml.Decode(line+"\n", &root); err == nil {
		if keys := md.Keys(); len(keys) > 0 {
			b.key = keys[len(keys)-1]
		}
	}
	return b
}

// skipTOMLString returns the offset just after the string that starts at
// i: basic or literal, on one line or multi-line.
func skipTOMLString(data []byte, i int) int {
	q := data[i]
	if bytes.HasPrefix(data[i:], []byte{q, q, q}) {
		j := i + 3
		for j < len(data) {
			switch {
			case q == '"' && data[j] == '\\':
				j += 2
			case bytes.HasPrefix(data[j:], []byte{q, q, q}):
				j += 3
				for n := 0; n < 2 && j < len(data) && data[j] == q; n++ { // """a""""" ends with quotes in the string
					j++
				}
				return j
			default:
				j++
			}
		}
		return len(data)
	}
	for j := i + 1; j < len(data); j++ {
		switch {
		case q == '"' && data[j] == '\\':
			j++
		case data[j] == q:
			return j + 1
		case data[j] == '\n':
			return j // not valid TOML; the line ends the string
		}
	}
	return len(data)
}
