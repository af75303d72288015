package config

// Host importers read another host's MCP settings, read-only, and normalize
// each server entry to our own schema (the value of an mcpServers object).
// importServers then validates the result with the tolerant rules of shared
// files, so names, transports, references and the rule that credentials are
// references are checked in one place for every host. Where each host keeps
// its servers, and how its entries differ from ours, is written down in the
// host configuration reference, HOSTS.md.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/internal/jsonc"
	"github.com/tailscale/hujson"
)

// hostImporters maps a host name to the function that reads its files.
var hostImporters = map[string]func(Dirs, *Import){
	"claude-code":    importClaudeCode,
	"claude-desktop": importClaudeDesktop,
	"codex":          importCodex,
	"cursor":         importCursor,
	"gemini":         importGemini,
	"opencode":       importOpencode,
	"vscode":         importVSCode,
	"windsurf":       importWindsurf,
}

// maxHostFileSize bounds a host file. It is larger than maxFileSize because
// ~/.claude.json also holds Claude Code's per-project state.
const maxHostFileSize = 64 << 20

// read returns the content of a host file. It reports false for a missing
// file, which is no problem, and for one that cannot be read, which is.
func (imp *Import) read(path string) ([]byte, bool) {
	data, err := readHostFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		imp.Problems = append(imp.Problems, Problem{Severity: SeverityWarning, File: path,
			Message: fmt.Sprintf("cannot read: %v (nothing imported)", withoutPath(err))})
		return nil, false
	}
	return data, true
}

func readHostFile(path string) ([]byte, error) { return readLimited(path, maxHostFileSize) }

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

// readJSON reads and parses a host's JSON or JSONC file. read is false when
// the file is missing or unreadable; root is nil when it does not parse.
// Numbers stay json.Number, so they reach validation as written.
func (imp *Import) readJSON(path string) (root map[string]any, read bool) {
	data, ok := imp.read(path)
	if !ok {
		return nil, false
	}
	if off := invalidUTF8(data); off >= 0 {
		// Decoding would quietly turn the byte into U+FFFD, so that what
		// runs would not be what the file says.
		line := 1 + bytes.Count(data[:off], []byte("\n"))
		col := 1 + off - (bytes.LastIndexByte(data[:off], '\n') + 1)
		imp.fileProblem(path, line, col, "invalid JSON: byte 0x%02x is not UTF-8 (hint: save the file as UTF-8)", data[off])
		return nil, true
	}
	std, err := hujson.Standardize(bytes.Clone(data))
	if err != nil {
		line, col, msg := jsonc.Position(err)
		imp.fileProblem(path, line, col, "invalid JSON: %s", msg)
		return nil, true
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		imp.fileProblem(path, 0, 0, "invalid JSON: %v", err)
		return nil, true
	}
	root, ok = v.(map[string]any)
	if !ok {
		imp.fileProblem(path, 0, 0, "the file must hold an object, not %s", kindOf(v))
		return nil, true
	}
	return root, true
}

// fileProblem reports a host file that yields nothing.
func (imp *Import) fileProblem(path string, line, col int, format string, args ...any) {
	imp.Problems = append(imp.Problems, Problem{Severity: SeverityWarning, File: path, Line: line, Col: col,
		Message: fmt.Sprintf(format, args...) + " (nothing imported)"})
}

// hostFile gathers the normalized entries of one host file.
type hostFile struct {
	src      Source
	entries  []*entry
	problems []Problem
}

func (imp *Import) newFile(path string) *hostFile {
	imp.Files = append(imp.Files, path)
	return &hostFile{src: Source{Kind: KindImport, Path: path, Host: imp.Host}}
}

func (f *hostFile) warnf(server, path, format string, args ...any) {
	f.problems = append(f.problems, Problem{Severity: SeverityWarning, File: f.src.Path, Path: path,
		Server: server, Message: fmt.Sprintf(format, args...)})
}

// servers normalizes each member of the object v, found at path, with norm.
func (f *hostFile) servers(v any, path string, norm func(f *hostFile, name, path string, v any) *entry) {
	obj, ok := v.(map[string]any)
	if !ok {
		f.warnf("", path, "must be an object, not %s (nothing imported)", kindOf(v))
		return
	}
	for _, name := range sortedKeys(obj) {
		f.entries = append(f.entries, norm(f, name, joinPath(path, name), obj[name]))
	}
}

// entry is one host server entry normalized to our schema.
type entry struct {
	name string
	path string            // where the host file defines it, e.g. servers.github
	def  map[string]any    // in our schema
	from map[string]string // a path inside def → the host's path inside the entry, where they differ
	skip bool              // unusable; a warning says why
}

// newEntry starts the entry for v, which must be an object.
func (f *hostFile) newEntry(name, path string, v any) (*entry, map[string]any) {
	e := &entry{name: name, path: path, def: map[string]any{}, from: map[string]string{}}
	obj, ok := v.(map[string]any)
	if !ok {
		f.warnf(name, path, "must be an object, not %s (server skipped)", kindOf(v))
		e.skip = true
	}
	return e, obj
}

// set stores a field of our schema that comes from the host's field host.
func (e *entry) set(field string, v any, host string) {
	e.def[field] = v
	if host != field {
		e.from[field] = host
	}
}

// origin records that a path inside def comes from the host's path inside
// the entry.
func (e *entry) origin(path, host string) { e.from[path] = host }

// hostPath turns a path inside the normalized definition (env.TOKEN) into
// the path of the host's own field (mcp.x.environment.TOKEN).
func (e *entry) hostPath(rest string) string {
	best := ""
	for k := range e.from {
		if len(k) > len(best) && under(rest, k) {
			best = k
		}
	}
	if best != "" {
		rest = e.from[best] + rest[len(best):]
	}
	return joinPath(e.path, rest)
}

// under reports whether path is prefix or lies inside it.
func under(path, prefix string) bool {
	rest, ok := strings.CutPrefix(path, prefix)
	return ok && (rest == "" || rest[0] == '.' || rest[0] == '[')
}

// add validates the entries of f and adds the usable servers and every
// problem to imp. Problems name the host's file, server and field.
func (imp *Import) add(f *hostFile) {
	if imp.opts.MoveSecrets {
		for _, e := range f.entries {
			if !e.skip {
				imp.moveSecrets(e)
			}
		}
	}
	defs := map[string]any{}
	byName := map[string]*entry{}
	for _, e := range f.entries {
		if !e.skip {
			defs[e.name] = e.def
			byName[e.name] = e
		}
	}
	if len(defs) > 0 {
		servers, probs := importServers(f.src, defs)
		for _, p := range probs {
			f.problems = append(f.problems, rehome(p, byName))
		}
		for _, s := range servers {
			s.Path = byName[s.Name].path
		}
		imp.Servers = append(imp.Servers, servers...)
	}
	sort.SliceStable(f.problems, func(i, j int) bool { return f.problems[i].Server < f.problems[j].Server })
	imp.Problems = append(imp.Problems, f.problems...)
}

// rehome moves a problem found in the normalized definitions back to the
// entry of the host file it came from.
func rehome(p Problem, byName map[string]*entry) Problem {
	rest, ok := strings.CutPrefix(p.Path, "mcpServers.")
	if !ok {
		return p
	}
	var e *entry
	for name, cand := range byName {
		if under(rest, name) && (e == nil || len(name) > len(e.name)) {
			e = cand
		}
	}
	if e == nil {
		return p
	}
	p.Server = e.name
	p.Path = e.hostPath(strings.TrimPrefix(rest[len(e.name):], "."))
	return p
}
