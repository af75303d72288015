// Package hosts knows the files of the other MCP hosts (Claude Code, Claude
// Desktop, Cursor, VS Code, Windsurf, Codex, opencode, Gemini CLI): where
// each keeps its servers on each platform, how to read their entries, and
// how to change those files without disturbing anything else in them.
//
// It is the one boundary between Switchboard and other programs' files:
//
//   - Read (for config's imports) reads a host's files, read-only, and
//     normalizes each server entry to Switchboard's own schema (the value
//     of an mcpServers object), with warnings that name the host's file,
//     server and field. Validating the result is config's job.
//   - PlanSetup and Setup.Write mount Switchboard in a host (switchboard
//     setup); PlanMigrate and Migration.Write turn off, in the host's own
//     file, the servers Switchboard now serves (setup --migrate); Undo puts
//     a file back from its backup. These are the only code in Switchboard
//     that writes a file that is not its own, and only when a person asks.
//
// Every write edits the file's text (JSON and JSONC on its syntax tree,
// Codex's TOML as text), keeps every other byte, backs the file up first,
// writes atomically and reads the result back. Where each host keeps its
// servers, and what an entry looks like, is in the host configuration
// reference, HOSTS.md.
package hosts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/jsonc"
	"github.com/switchboard-mcp/switchboard/internal/privfile"
)

// Dirs are the directories the hosts' files are found in, as config.Dirs
// has them (config.Dirs.Hosts). Empty fields take their defaults from Home.
type Dirs struct {
	GOOS         string // "linux", "darwin", "windows"; default linux
	Home         string // the user's home directory
	ConfigHome   string // $XDG_CONFIG_HOME; default Home/.config
	CodexHome    string // $CODEX_HOME; default Home/.codex
	AppData      string // %APPDATA% on Windows; default Home\AppData\Roaming
	LocalAppData string // %LOCALAPPDATA% on Windows; default Home\AppData\Local
}

// WithDefaults fills the empty fields from Home.
func (d Dirs) WithDefaults() Dirs {
	if d.GOOS == "" {
		d.GOOS = "linux"
	}
	if d.ConfigHome == "" {
		d.ConfigHome = d.join(d.Home, ".config")
	}
	if d.CodexHome == "" {
		d.CodexHome = d.join(d.Home, ".codex")
	}
	if d.GOOS == "windows" && d.AppData == "" {
		d.AppData = d.join(d.Home, "AppData", "Roaming")
	}
	if d.GOOS == "windows" && d.LocalAppData == "" {
		d.LocalAppData = d.join(d.Home, "AppData", "Local")
	}
	return d
}

func (d Dirs) join(elem ...string) string { return Join(d.GOOS, elem...) }

// readers maps a host name to the function that reads its files.
var readers = map[string]func(Dirs, *reader){
	"claude-code":    importClaudeCode,
	"claude-desktop": importClaudeDesktop,
	"codex":          importCodex,
	"cursor":         importCursor,
	"gemini":         importGemini,
	"opencode":       importOpencode,
	"vscode":         importVSCode,
	"windsurf":       importWindsurf,
}

// Names lists the hosts Switchboard reads and writes, sorted.
func Names() []string { return slices.Sorted(maps.Keys(readers)) }

// validName reports whether name is a valid server name: 1 to 64 letters,
// digits, '-' or '_' (config.ValidName, which a test keeps equal).
func validName(name string) bool { return serverNameRE().MatchString(name) }

var serverNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

// Known reports whether name is one of Names.
func Known(name string) bool { _, ok := readers[name]; return ok }

// A Problem is a warning about a host's file: reading a host never fails
// Switchboard's configuration.
type Problem struct {
	File      string
	Line, Col int    // 0 when unknown
	Path      string // the field, such as mcpServers.github.env
	Server    string // the server it is about, or ""
	Message   string
}

// Error formats the problem as FILE[:LINE:COL]: [PATH: ]MESSAGE.
func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", p.Line, p.Col)
	}
	b.WriteString(": ")
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// File is what reading one host file gave.
type File struct {
	Path string
	// Read is true when the file exists and was read; a file that cannot
	// be read, or does not parse, may still have Problems.
	Read     bool
	Entries  []*Entry  // its server entries, normalized, sorted by name
	Problems []Problem // about the file first, then its entries
}

// Entry is one host server entry normalized to our schema.
type Entry struct {
	Name string
	Path string         // where the host file defines it, e.g. servers.github
	Def  map[string]any // in our schema: the value of mcpServers.NAME
	Skip bool           // unusable; a problem says why

	from map[string]string // a path inside Def → the host's path inside the entry, where they differ
}

// Read reads a host's server definitions, read-only, file by file in the
// host's own order of precedence, lowest first. An unknown host is an
// error.
func Read(d Dirs, host string) ([]*File, error) {
	f, ok := readers[host]
	if !ok {
		return nil, fmt.Errorf("unknown host %q (known hosts: %v)", host, Names())
	}
	r := &reader{}
	f(d.WithDefaults(), r)
	return r.files, nil
}

// reader gathers the files of one host as its importer reads them.
type reader struct{ files []*File }

// file returns the File of path: the last one, if it is path's, else a new one.
func (r *reader) file(path string) *File {
	if n := len(r.files); n > 0 && r.files[n-1].Path == path {
		return r.files[n-1]
	}
	f := &File{Path: path}
	r.files = append(r.files, f)
	return f
}

// MaxFileSize bounds a host file. It is larger than our own files' bound
// because ~/.claude.json also holds Claude Code's per-project state.
const MaxFileSize = 64 << 20

// read returns the content of a host file. It reports false for a missing
// file, which is no problem, and for one that cannot be read, which is.
func (r *reader) read(path string) ([]byte, bool) {
	data, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		r.fileProblem(path, 0, 0, "cannot read: %v", unwrapPath(err))
		return nil, false
	}
	return data, true
}

func readFile(path string) ([]byte, error) { return privfile.ReadRegular(path, MaxFileSize) }

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readJSON reads and parses a host's JSON or JSONC file. read is false when
// the file is missing or unreadable; root is nil when it does not parse.
// Numbers stay json.Number, so they reach validation as written.
func (r *reader) readJSON(path string) (root map[string]any, read bool) {
	data, ok := r.read(path)
	if !ok {
		return nil, false
	}
	root, p := parseJSON(path, data)
	if p != nil {
		r.fileProblem(path, p.Line, p.Col, "%s", p.Message)
		return nil, true
	}
	return root, true
}

// parseJSON parses a host's JSON or JSONC file, which must hold an object.
// The problem never quotes the file's text, which may hold a secret.
func parseJSON(path string, data []byte) (map[string]any, *Problem) {
	fail := func(line, col int, format string, args ...any) (map[string]any, *Problem) {
		return nil, &Problem{File: path, Line: line, Col: col, Message: fmt.Sprintf(format, args...)}
	}
	if off := invalidUTF8(data); off >= 0 {
		// Decoding would quietly turn the byte into U+FFFD, so that what
		// runs would not be what the file says.
		line := 1 + bytes.Count(data[:off], []byte("\n"))
		col := 1 + off - (bytes.LastIndexByte(data[:off], '\n') + 1)
		return fail(line, col, "invalid JSON: byte 0x%02x is not UTF-8 (hint: save the file as UTF-8)", data[off])
	}
	v, err := jsonc.Parse(bytes.Clone(data)) // the tree shares the buffer, and Standardize writes to it
	if err != nil {
		line, col, msg := jsonc.Position(err)
		return fail(line, col, "invalid JSON: %s", msg)
	}
	v.Standardize()
	dec := json.NewDecoder(bytes.NewReader(v.Pack()))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return fail(0, 0, "invalid JSON: %v", err)
	}
	obj, ok := root.(map[string]any)
	if !ok {
		return fail(0, 0, "the file must hold an object, not %s", kindOf(root))
	}
	return obj, nil
}

// invalidUTF8 returns the offset of the first byte of data that is not
// UTF-8, or -1.
func invalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// fileProblem reports a host file that yields nothing.
func (r *reader) fileProblem(path string, line, col int, format string, args ...any) {
	f := r.file(path)
	f.Problems = append(f.Problems, Problem{File: path, Line: line, Col: col,
		Message: fmt.Sprintf(format, args...) + " (nothing imported)"})
}

// newFile starts the entries of a file that was read.
func (r *reader) newFile(path string) *File {
	f := r.file(path)
	f.Read = true
	return f
}

func (f *File) warnf(server, path, format string, args ...any) {
	f.Problems = append(f.Problems, Problem{File: f.Path, Path: path, Server: server, Message: fmt.Sprintf(format, args...)})
}

// servers normalizes each member of the object v, found at path, with norm.
func (f *File) servers(v any, path string, norm func(f *File, name, path string, v any) *Entry) {
	obj, ok := v.(map[string]any)
	if !ok {
		f.warnf("", path, "must be an object, not %s (nothing imported)", kindOf(v))
		return
	}
	for _, name := range sortedKeys(obj) {
		f.Entries = append(f.Entries, norm(f, name, joinPath(path, name), obj[name]))
	}
}

// newEntry starts the entry for v, which must be an object.
func (f *File) newEntry(name, path string, v any) (*Entry, map[string]any) {
	e := &Entry{Name: name, Path: path, Def: map[string]any{}, from: map[string]string{}}
	obj, ok := v.(map[string]any)
	if !ok {
		f.warnf(name, path, "must be an object, not %s (server skipped)", kindOf(v))
		e.Skip = true
	}
	return e, obj
}

// set stores a field of our schema that comes from the host's field host.
func (e *Entry) set(field string, v any, host string) {
	e.Def[field] = v
	if host != field {
		e.from[field] = host
	}
}

// origin records that a path inside Def comes from the host's path inside
// the entry.
func (e *Entry) origin(path, host string) { e.from[path] = host }

// HostPath turns a path inside the normalized definition (env.TOKEN) into
// the path of the host's own field (mcp.x.environment.TOKEN).
func (e *Entry) HostPath(rest string) string {
	best := ""
	for k := range e.from {
		if len(k) > len(best) && Under(rest, k) {
			best = k
		}
	}
	if best != "" {
		rest = e.from[best] + rest[len(best):]
	}
	return joinPath(e.Path, rest)
}

// Under reports whether path is prefix or lies inside it.
func Under(path, prefix string) bool {
	rest, ok := strings.CutPrefix(path, prefix)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
