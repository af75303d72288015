package config

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/switchboard-mcp/switchboard/config/hosts"
	"github.com/switchboard-mcp/switchboard/internal/jsonc"
	"github.com/tailscale/hujson"
)

// document is one decoded file.
type document struct {
	servers  []*Server // in file order
	settings *fileSettings
	imports  []string
	canon    []byte // canonical JSON of the content, for project trust hashes
}

// fileSettings holds the settings a file sets; nil fields are unset.
type fileSettings struct {
	toolPrefix     *string
	freezeDirect   *bool
	noAppTools     *bool // settings.appTools, inverted
	scriptMode     *bool
	scriptTimeout  *time.Duration
	trace          **Trace // set: the file says; *nil: false
	idleTimeout    *time.Duration
	requestTimeout *time.Duration
	maxBytes       *int
	maxLines       *int
	unbounded      *bool // "output": false, or an object (false)
	directTools    *bool
	imports        []string
	embeddings     *Embeddings
	credStore      *string
	credStoreKey   *string // a reference, never a value
	telemetry      *Telemetry
	store          *Store
	identity       *Identity
	roots          *Roots
	agentPlugins   []string // settings.agentPluginPaths, absolute or ~/
	strict         *bool
	allowTools     map[string][]string // settings.includeTools; nil when unset
	registry       *string             // settings.registry
	hostConfigs    *string             // settings.hostConfigs
	policy         policySettings
}

// decoder walks the syntax tree of one JSONC file. Our own files are strict:
// an unknown field is an error. Shared files and imports are tolerant:
// fields other hosts write are ignored and unknown ones are warnings.
type decoder struct {
	src      Source
	data     []byte
	strict   bool
	problems []Problem
	fatal    bool    // a problem that fails the whole configuration closed
	entry    string  // the server whose entry is being decoded: its errors are its own
	newlines []int   // offsets of the line breaks in data, found on first use
	plugin   *plugin // the plugin whose mcp.json this is; nil for other files
}

// hostFields are fields other hosts are known to write into server entries.
var hostFields = map[string]bool{
	"autoApprove": true, "alwaysAllow": true, "timeout": true, "description": true,
	"enabled": true, "envFile": true, "alwaysLoad": true, "oauth": true, "headersHelper": true,
	"trust": true, "transportType": true, "serverUrl": true, "httpUrl": true, "dev": true,
	"sandboxEnabled": true, "gallery": true, "version": true, "name": true,
}

// decodeFile parses and validates data read from src. Problems are returned
// with positions; fatal reports whether one of them must fail the
// configuration closed.
func decodeFile(src Source, data []byte) (doc *document, problems []Problem, fatal bool) {
	d := &decoder{src: src, data: data, strict: src.Ours()}
	doc = d.file()
	return doc, d.problems, d.fatal
}

// position returns the line and column of v. A file may hold many problems,
// so the line breaks are indexed once rather than counted for each.
func (d *decoder) position(v *hujson.Value) (line, col int) {
	if v == nil {
		return 0, 0
	}
	if d.newlines == nil {
		d.newlines = []int{}
		for i, b := range d.data {
			if b == '\n' {
				d.newlines = append(d.newlines, i)
			}
		}
	}
	off := min(v.StartOffset, len(d.data))
	n, _ := slices.BinarySearch(d.newlines, off) // line breaks before off
	lineStart := 0
	if n > 0 {
		lineStart = d.newlines[n-1] + 1
	}
	return 1 + n, 1 + off - lineStart
}

func (d *decoder) add(sev Severity, v *hujson.Value, path, server, format string, args ...any) {
	line, col := d.position(v)
	d.problems = append(d.problems, Problem{
		Severity: sev, File: d.src.Path, Line: line, Col: col,
		Path: path, Server: server, Message: fmt.Sprintf(format, args...),
	})
}

// errorf records a schema violation. Inside one server's entry it makes
// that server invalid and leaves the others alone (serverError); anywhere
// else it fails the configuration closed.
func (d *decoder) errorf(v *hujson.Value, path, format string, args ...any) {
	if d.entry != "" {
		d.serverError(d.entry, v, path, format, args...)
		return
	}
	d.fatal = true
	d.add(SeverityError, v, path, serverOf(path), format, args...)
}

func (d *decoder) warnf(v *hujson.Value, path, format string, args ...any) {
	d.add(SeverityWarning, v, path, serverOf(path), format, args...)
}

func serverOf(path string) string {
	rest, ok := strings.CutPrefix(path, "mcpServers.")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, ".")
	return name
}

// unknown reports a field the schema does not know.
func (d *decoder) unknown(v *hujson.Value, path, field string, known []string) {
	if d.strict {
		d.errorf(v, path, "unknown field %q (known fields: %s)", field, strings.Join(known, ", "))
		return
	}
	d.warnf(v, path, "unknown field %q ignored", field)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (d *decoder) file() *document {
	root, err := jsonc.Parse(d.data)
	if err != nil {
		d.fatal = true
		line, col, msg := jsonc.Position(err)
		d.problems = append(d.problems, Problem{Severity: SeverityError, File: d.src.Path, Line: line, Col: col,
			Message: "invalid JSON: " + msg})
		return nil
	}
	doc := &document{canon: canonical(root)}
	obj, ok := d.object(&root, "")
	if !ok {
		return nil
	}
	known := []string{"$schema", "mcpServers"}
	if d.strict {
		known = append(known, "settings", "imports")
	}
	for _, m := range d.members(obj, "") {
		key, v := m.key, m.value
		switch {
		case key == "$schema":
		case key == "mcpServers":
			doc.servers = d.servers(v)
		case key == "settings" && d.strict:
			doc.settings = d.settings(v, "settings")
		case key == "imports" && d.strict:
			doc.imports = d.imports(v, "imports")
		default:
			d.unknown(v, "", key, known) // a warning in shared files
		}
	}
	return doc
}

// canonical returns the content as standard JSON with comments removed, for
// hashing; formatting and comments do not change it.
func canonical(v hujson.Value) []byte {
	v = v.Clone()
	v.Minimize()
	return v.Pack()
}

type member struct {
	key   string
	value *hujson.Value
}

// members returns the members of obj, reporting duplicate keys: an error in
// strict files, a warning elsewhere (the last one wins, as in most parsers).
func (d *decoder) members(obj *hujson.Object, path string) []member {
	seen := make(map[string]int, len(obj.Members))
	var out []member
	for i := range obj.Members {
		m := &obj.Members[i]
		key := m.Name.Value.(hujson.Literal).String()
		if j, dup := seen[key]; dup {
			if d.strict {
				d.errorf(&m.Name, joinPath(path, key), "duplicate key %q", key)
			} else {
				d.warnf(&m.Name, joinPath(path, key), "duplicate key %q: the last one counts", key)
			}
			out[j].value = &m.Value
			continue
		}
		seen[key] = len(out)
		out = append(out, member{key: key, value: &m.Value})
	}
	return out
}

func kindName(v *hujson.Value) string {
	switch v.Value.Kind() {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "unknown"
}

func (d *decoder) object(v *hujson.Value, path string) (*hujson.Object, bool) {
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		what := path
		if what == "" {
			what = "the file"
		}
		d.errorf(v, path, "%s must be an object, not %s", what, kindName(v))
	}
	return obj, ok
}

// str decodes a string. Every string must be valid UTF-8: the parser would
// quietly turn a bad byte into U+FFFD, so that what runs is not what the
// file says.
func (d *decoder) str(v *hujson.Value, path string) (string, bool) {
	return d.stringOf(v, path, false)
}

// text decodes a string that reaches a child process: a command, an
// argument, a working directory or an environment value. It must not hold
// NUL either, which no command line or environment can carry: exec would
// refuse it only when the server starts, far from the file.
func (d *decoder) text(v *hujson.Value, path string) (string, bool) {
	return d.stringOf(v, path, true)
}

func (d *decoder) stringOf(v *hujson.Value, path string, noNUL bool) (string, bool) {
	lit, ok := v.Value.(hujson.Literal)
	if !ok || lit.Kind() != '"' {
		d.errorf(v, path, "must be a string, not %s", kindName(v))
		return "", false
	}
	if off, msg := badText(lit, noNUL); off >= 0 {
		d.errorAt(v, off, path, "%s", msg)
		return "", false
	}
	return lit.String(), true
}

// errorAt records a schema violation at byte off of the value v, which lies
// on the value's line: JSON strings hold no raw line breaks.
func (d *decoder) errorAt(v *hujson.Value, off int, path, format string, args ...any) {
	d.errorf(v, path, format, args...)
	if p := &d.problems[len(d.problems)-1]; p.Line > 0 {
		p.Col += off
	}
}

// badText finds, in a JSON string literal (quotes included), the first
// thing that is not valid UTF-8 text (a bad byte, or an escaped half of a
// UTF-16 surrogate pair) or, with noNUL, a NUL. It returns its offset in the
// literal and what is wrong, or -1. Messages never show the text: it may be
// a credential.
func badText(lit []byte, noNUL bool) (int, string) {
	for i := 1; i < len(lit)-1; {
		if lit[i] != '\\' {
			r, size := utf8.DecodeRune(lit[i:])
			if r == utf8.RuneError && size == 1 {
				return i, fmt.Sprintf("must be valid UTF-8, and byte 0x%02x is not (hint: save the file as UTF-8; the text is not shown)", lit[i])
			}
			i += size
			continue
		}
		if i+1 >= len(lit) || lit[i+1] != 'u' {
			i += 2
			continue
		}
		r := hexRune(lit[i+2:])
		switch {
		case r == 0 && noNUL:
			return i, `must not hold NUL (\u0000): no command line or environment can carry it (the text is not shown)`
		case utf16.IsSurrogate(r) && r < 0xdc00 && utf16.DecodeRune(r, lowHalf(lit[i+6:])) != utf8.RuneError:
			i += 12 // a high and a low half: one character
			continue
		case utf16.IsSurrogate(r):
			return i, fmt.Sprintf(`must be valid UTF-8, and \u%04x is half of a UTF-16 surrogate pair, not a character (the text is not shown)`, r)
		}
		i += 6
	}
	return -1, ""
}

// hexRune decodes the four hex digits at the start of b; -1 if they are not.
func hexRune(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 16)
	if err != nil {
		return -1
	}
	return rune(n)
}

// lowHalf decodes an escape \uXXXX at the start of b; -1 if there is none.
func lowHalf(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	return hexRune(b[2:])
}

func (d *decoder) boolean(v *hujson.Value, path string) (bool, bool) {
	lit, ok := v.Value.(hujson.Literal)
	if !ok || (lit.Kind() != 't' && lit.Kind() != 'f') {
		d.errorf(v, path, "must be true or false, not %s", kindName(v))
		return false, false
	}
	return lit.Bool(), true
}

// setting decodes a boolean setting: nil when it is not one (and said so).
func (d *decoder) setting(v *hujson.Value, path string) *bool {
	b, ok := d.boolean(v, path)
	if !ok {
		return nil
	}
	return &b
}

// integer decodes a whole number in [lo, hi].
func (d *decoder) integer(v *hujson.Value, path string, lo, hi int64) (int64, bool) {
	lit, ok := v.Value.(hujson.Literal)
	if !ok || lit.Kind() != '0' {
		d.errorf(v, path, "must be a number, not %s", kindName(v))
		return 0, false
	}
	// Not lit.Float, which gives 0 for a number out of range (1e400).
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		d.errorf(v, path, "must be a whole number from %d to %d, not %s", lo, hi, truncate(string(lit), 40))
		return 0, false
	}
	return int64(f), true
}

func (d *decoder) strings(v *hujson.Value, path string) ([]string, bool) {
	return d.list(v, path, d.str)
}

// texts decodes the arguments of a command; see text.
func (d *decoder) texts(v *hujson.Value, path string) ([]string, bool) {
	return d.list(v, path, d.text)
}

func (d *decoder) list(v *hujson.Value, path string, elem func(*hujson.Value, string) (string, bool)) ([]string, bool) {
	arr, ok := v.Value.(*hujson.Array)
	if !ok {
		d.errorf(v, path, "must be an array of strings, not %s", kindName(v))
		return nil, false
	}
	out := make([]string, 0, len(arr.Elements))
	for i := range arr.Elements {
		s, ok := elem(&arr.Elements[i], fmt.Sprintf("%s[%d]", path, i))
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// stringMap decodes an object of strings. Tolerant files may hold numbers and
// booleans, which other hosts accept; they are kept as written.
func (d *decoder) stringMap(v *hujson.Value, path string) (map[string]string, bool) {
	return d.mapOf(v, path, d.str)
}

// env decodes an environment: an object of texts (see text) whose keys are
// variable names a process can be given.
func (d *decoder) env(v *hujson.Value, path string) (map[string]string, bool) {
	obj, ok := d.object(v, path)
	if !ok {
		return nil, false
	}
	for i := range obj.Members {
		name := &obj.Members[i].Name
		lit := name.Value.(hujson.Literal)
		p := joinPath(path, quoteOdd(lit.String()))
		if off, msg := badText(lit, true); off >= 0 {
			d.errorAt(name, off, p, "the variable's name %s", msg)
			return nil, false
		}
		if off := bytes.IndexByte(lit, '='); off >= 0 || len(lit) == 2 {
			d.errorAt(name, max(off, 0), p, "a variable's name must not be empty or hold '=': the environment could not tell it from its value")
			return nil, false
		}
	}
	return d.mapOf(v, path, d.text)
}

// quoteOdd escapes a key for a JSON path when it holds what a terminal
// should not be sent raw (NUL, control characters).
func quoteOdd(key string) string {
	q := strconv.Quote(key)
	return q[1 : len(q)-1]
}

func (d *decoder) mapOf(v *hujson.Value, path string, elem func(*hujson.Value, string) (string, bool)) (map[string]string, bool) {
	obj, ok := d.object(v, path)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(obj.Members))
	for _, m := range d.members(obj, path) {
		p := joinPath(path, m.key)
		if lit, ok := m.value.Value.(hujson.Literal); ok && !d.strict && (lit.Kind() == '0' || lit.Kind() == 't' || lit.Kind() == 'f') {
			out[m.key] = string(lit)
			continue
		}
		s, ok := elem(m.value, p)
		if !ok {
			return nil, false
		}
		out[m.key] = s
	}
	return out, true
}

func (d *decoder) imports(v *hujson.Value, path string) []string {
	list, ok := d.strings(v, path)
	if !ok {
		return nil
	}
	for i, h := range list {
		if !hosts.Known(h) {
			d.errorf(v, fmt.Sprintf("%s[%d]", path, i), "unknown host %q (known hosts: %s)", h, strings.Join(HostNames(), ", "))
			return nil
		}
	}
	return list
}

var settingsFields = []string{"toolPrefix", "idleTimeout", "requestTimeoutMs", "output", "directTools", "imports", "embeddings", "credentialStore", "credentialStoreKey", "telemetry", "approve", "pin", "audit", "offline", "store", "identity", "roots", "strict", "includeTools", "freezeDirectTools", "appTools", "trace", "agentPluginPaths", "scriptMode", "scriptTimeoutMs", "registry", "hostConfigs"}

// allowTools decodes settings.includeTools: patterns written
// mcp__SERVER__GLOB, by server.
func (d *decoder) allowTools(v *hujson.Value, p string) map[string][]string {
	list, ok := d.strings(v, p)
	if !ok {
		return nil
	}
	out := map[string][]string{}
	for i, pattern := range list {
		server, glob, ok := SplitToolPattern(pattern)
		if !ok || server == "*" || glob == "" {
			d.errorf(v, fmt.Sprintf("%s[%d]", p, i), `must name a server and a glob of its tools as mcp__SERVER__GLOB (mcp__github__* for every tool of github, mcp__github__get_* for some), not %q`, pattern)
			continue
		}
		out[server] = append(out[server], glob)
	}
	return out
}

// ToolPrefixes are the ways a server's tools are named as direct tools
// (and its prompts): "server" (github_create_issue), "short" (a -mcp or
// _mcp suffix of the server's name dropped), "none" (create_issue) and
// "mcp" (mcp__github__create_issue, as Claude Code and pi-mcp-adapter
// name them).
var ToolPrefixes = []string{"server", "short", "none", "mcp"}

// toolPrefix decodes a toolPrefix value; "" when it is not one.
func (d *decoder) toolPrefix(v *hujson.Value, p string) string {
	str, ok := d.str(v, p)
	if !ok {
		return ""
	}
	if !slices.Contains(ToolPrefixes, str) {
		d.errorf(v, p, `must be "server", "short", "none" or "mcp", not %q`, str)
		return ""
	}
	return str
}

// SplitToolPattern splits a tool pattern written mcp__SERVER__GLOB (the
// namespacing terret-mcp and agent orchestrators use, and Switchboard's
// toolPrefix "mcp") into the server's name and the glob of its tools. ok
// is false for a pattern not written so.
func SplitToolPattern(pattern string) (server, glob string, ok bool) {
	rest, ok := strings.CutPrefix(pattern, "mcp__")
	if !ok {
		return "", "", false
	}
	server, glob, ok = strings.Cut(rest, "__")
	if !ok || server == "" {
		return "", "", false
	}
	return server, glob, true
}

func (d *decoder) settings(v *hujson.Value, path string) *fileSettings {
	obj, ok := d.object(v, path)
	if !ok {
		return nil
	}
	s := &fileSettings{}
	var keyAt *hujson.Value // settings.credentialStoreKey
	for _, m := range d.members(obj, path) {
		p := joinPath(path, m.key)
		switch m.key {
		case "toolPrefix":
			if str := d.toolPrefix(m.value, p); str != "" {
				s.toolPrefix = &str
			}
		case "freezeDirectTools":
			s.freezeDirect = d.setting(m.value, p)
		case "appTools":
			if on := d.setting(m.value, p); on != nil {
				off := !*on
				s.noAppTools = &off
			}
		case "scriptMode":
			s.scriptMode = d.setting(m.value, p)
		case "scriptTimeoutMs":
			if n, ok := d.integer(m.value, p, 1, 10*60*1000); ok {
				t := time.Duration(n) * time.Millisecond
				s.scriptTimeout = &t
			}
		case "trace":
			if t, ok := d.trace(m.value, p); ok {
				s.trace = &t
			}
		case "idleTimeout":
			if n, ok := d.integer(m.value, p, 0, 7*24*60); ok {
				t := time.Duration(n) * time.Minute
				s.idleTimeout = &t
			}
		case "requestTimeoutMs":
			if n, ok := d.integer(m.value, p, 1, 24*60*60*1000); ok {
				t := time.Duration(n) * time.Millisecond
				s.requestTimeout = &t
			}
		case "output":
			d.output(m.value, p, s)
		case "directTools":
			s.directTools = d.setting(m.value, p)
		case "imports":
			s.imports = d.imports(m.value, p)
		case "embeddings":
			s.embeddings = d.embeddings(m.value, p)
		case "telemetry":
			s.telemetry = d.telemetry(m.value, p)
		case "store":
			s.store = d.store(m.value, p)
		case "identity":
			s.identity = d.identity(m.value, p)
		case "roots":
			s.roots = d.roots(m.value, p)
		case "strict":
			s.strict = d.setting(m.value, p)
		case "includeTools":
			s.allowTools = d.allowTools(m.value, p)
		case "agentPluginPaths":
			s.agentPlugins = d.agentPluginPaths(m.value, p)
		case "registry":
			s.registry = d.registryURL(m.value, p)
		case "hostConfigs":
			s.hostConfigs = d.hostConfigs(m.value, p)
		case "credentialStore":
			s.credStore = d.credentialStore(m.value, p)
		case "credentialStoreKey":
			s.credStoreKey = d.credentialStoreKey(m.value, p)
			keyAt = m.value
		default:
			if d.policySetting(s, m.key, m.value, p) {
				continue
			}
			d.unknown(m.value, path, m.key, settingsFields)
		}
	}
	d.checkCredentialStore(s, keyAt, path)
	return s
}

func (d *decoder) output(v *hujson.Value, path string, s *fileSettings) {
	if b, ok := v.Value.(hujson.Literal); ok && b.Kind() == 'f' {
		// "output": false: no bound (Output.Unbounded).
		off := true
		s.unbounded = &off
		return
	}
	obj, ok := v.Value.(*hujson.Object)
	if !ok {
		d.errorf(v, path, `%s must be an object such as {"maxBytes": 51200, "maxLines": 2000}, or false to turn the bound off, not %s`, path, kindName(v))
		return
	}
	on := false
	s.unbounded = &on
	for _, m := range d.members(obj, path) {
		p := joinPath(path, m.key)
		switch m.key {
		case "maxBytes":
			if n, ok := d.integer(m.value, p, 1024, 64<<20); ok {
				b := int(n)
				s.maxBytes = &b
			}
		case "maxLines":
			if n, ok := d.integer(m.value, p, 10, 1_000_000); ok {
				l := int(n)
				s.maxLines = &l
			}
		default:
			d.unknown(m.value, path, m.key, []string{"maxBytes", "maxLines"})
		}
	}
}

func (d *decoder) embeddings(v *hujson.Value, path string) *Embeddings {
	obj, ok := d.object(v, path)
	if !ok {
		return nil
	}
	e := &Embeddings{}
	for _, m := range d.members(obj, path) {
		p := joinPath(path, m.key)
		switch m.key {
		case "baseUrl":
			e.BaseURL, _ = d.str(m.value, p)
			d.references(m.value, p, e.BaseURL)
		case "apiKey":
			e.APIKey, _ = d.str(m.value, p)
			if d.references(m.value, p, e.APIKey) == 0 && e.APIKey != "" {
				d.errorf(m.value, p, "an API key must be a reference such as ${OPENAI_API_KEY}, not a literal (the value is not shown)")
				e.APIKey = Redacted
			}
		case "model":
			e.Model, _ = d.str(m.value, p)
		default:
			d.unknown(m.value, path, m.key, []string{"baseUrl", "apiKey", "model"})
		}
	}
	if e.BaseURL == "" {
		d.errorf(v, path, `needs "baseUrl", e.g. "http://127.0.0.1:11434/v1"`)
		return nil
	}
	return e
}
