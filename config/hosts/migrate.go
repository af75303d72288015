package hosts

// Migrating: once Switchboard is mounted in a host and serves the servers
// the host had, the host would still start each of them itself, beside
// Switchboard, and its model would see every tool twice. A migration turns
// them off in the host's own file, the host's own way (HOSTS.md §2,
// "Disable"): Codex's enabled = false, opencode's enabled: false (V1) or
// disabled: true (V2). The other hosts keep no such field in the file
// (Claude Code, VS Code, Cursor, Gemini CLI keep it elsewhere; Claude
// Desktop's and Windsurf's are unverified), so there the entry is removed:
// the backup keeps it, and Undo puts it back.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/internal/jsonc"
)

// MigrateOptions says which servers a migration turns off.
type MigrateOptions struct {
	// Name is Switchboard's own entry in the host, which is never turned
	// off; default DefaultSetupName.
	Name string
	// Servers are the names of the servers Switchboard serves: the
	// host's entries of those names are turned off.
	Servers []string
	// Journal is the file where the write is recorded for Undo; ""
	// records nothing.
	Journal string
	// Continues says the migration continues a write of the same command
	// (setup --migrate --write mounts Switchboard, then migrates): when
	// the journal's last change to the file is that write and the file is
	// still as it left it, the migration makes no backup of its own and
	// joins that change, so that one Undo restores the file as it was
	// before the command.
	Continues bool
}

// Migration is what turning off servers in a host's file takes. PlanMigrate
// makes one and changes nothing; Write changes the file.
type Migration struct {
	Host  string
	Title string
	File  string // the host's file: the one that mounts Switchboard, else the first that exists
	Key   string // where the host keeps its servers, such as mcpServers
	// Turned lists what a write does, by name.
	Turned []Turned
	// Off lists the servers the file has turned off already.
	Off []string
	// Kept lists the servers that a write leaves as they are, and why.
	Kept []Kept
	Err  error // why the file cannot be changed

	s         *Setup // the file as read
	out       []byte // the file as a write leaves it
	continues bool   // MigrateOptions.Continues
}

// Turned is a server a migration turns off.
type Turned struct {
	Name string `json:"name"`
	Path string `json:"path"` // the entry in the host's file, such as mcpServers.github
	How  string `json:"how"`  // "removed", or the field set, such as "disabled: true"
}

// Kept is a server a migration cannot turn off.
type Kept struct {
	Name string `json:"name"`
	Why  string `json:"why"`
}

// Changes reports whether a write would change the file.
func (m *Migration) Changes() bool { return m.Err == nil && len(m.Turned) > 0 }

// offField returns the field, and its value, that turns a server off in the
// host's entry, or "" where the host has none and the entry is removed.
func offField(host string, keys []string) (string, any) {
	switch {
	case host == "codex":
		return "enabled", false
	case host == "opencode" && len(keys) == 2: // V2: mcp.servers
		return "disabled", true
	case host == "opencode":
		return "enabled", false
	}
	return "", nil
}

// PlanMigrate reads the host's file and works out how to turn off the
// servers opts names. It changes nothing. An error means there is nothing
// to show: an unknown host or a bad name.
func PlanMigrate(d Dirs, host string, opts MigrateOptions) (*Migration, error) {
	d = d.WithDefaults()
	h, ok := setupHosts[host]
	if !ok {
		return nil, fmt.Errorf("unknown host %q: use one of %s", host, strings.Join(Names(), ", "))
	}
	name := cmp.Or(opts.Name, DefaultSetupName)
	if !validName(name) {
		return nil, fmt.Errorf("invalid server name %q: use 1 to 64 letters, digits, '-' or '_'", name)
	}
	var plans []*Setup
	for _, path := range h.files(d) {
		s := h.plan(path, name, snippetObject{})
		s.Host, s.journal = host, opts.Journal
		plans = append(plans, s)
	}
	s := choosePlan(plans)
	m := &Migration{Host: host, Title: s.Title, File: s.File, Key: s.Key, s: s, Err: s.Err, continues: opts.Continues}
	if s.State == SetupNoFile || s.State == SetupInvalid {
		return m, nil
	}
	names := slices.Sorted(slices.Values(slices.DeleteFunc(slices.Clone(opts.Servers), func(n string) bool { return n == name })))
	var err error
	if s.toml {
		m.out, err = m.editTOML(slices.Compact(names))
	} else {
		m.out, err = m.editJSON(slices.Compact(names))
	}
	if err == nil && m.Changes() {
		if err = m.check(m.out); err != nil {
			err = fmt.Errorf("the result would be wrong: %w", err)
		}
	}
	if err != nil {
		m.Err, m.Turned = fmt.Errorf("%s: %w", s.File, err), nil
	}
	return m, nil
}

// root returns the file's content, decoded.
func (m *Migration) root() (map[string]any, error) { return m.s.decode(m.s.data) }

// editJSON turns the servers off on the file's syntax tree.
func (m *Migration) editJSON(names []string) ([]byte, error) {
	decoded, err := m.root()
	if err != nil {
		return nil, err
	}
	root, err := jsonc.Parse(bytes.Clone(m.s.data))
	if err != nil {
		return nil, err
	}
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		return nil, errors.New("the file must hold an object")
	}
	for i, k := range m.s.keys {
		j := jsonc.MemberIndex(obj, k)
		if j < 0 {
			return m.s.data, nil // no servers at all
		}
		if obj, ok = obj.Members[j].Value.Value.(*hujson.Object); !ok {
			return nil, fmt.Errorf("%s must be an object", strings.Join(m.s.keys[:i+1], "."))
		}
	}
	field, value := offField(m.Host, m.s.keys)
	for _, name := range names {
		j := jsonc.MemberIndex(obj, name)
		if j < 0 {
			continue
		}
		path := joinPath(m.Key, name)
		if field == "" {
			jsonc.RemoveMember(obj, name)
			m.Turned = append(m.Turned, Turned{Name: name, Path: path, How: "removed"})
			continue
		}
		member := &obj.Members[j]
		entry, ok := member.Value.Value.(*hujson.Object)
		if !ok {
			m.Kept = append(m.Kept, Kept{name, "its entry is not an object"})
			continue
		}
		if cur, _ := lookup(decoded, append(slices.Clone(m.s.keys), name)).(map[string]any); cur[field] == value {
			m.Off = append(m.Off, name)
			continue
		}
		if err := jsonc.SetMember(entry, field, value, jsonc.IndentOf(member)); err != nil {
			return nil, err
		}
		m.Turned = append(m.Turned, Turned{Name: name, Path: path, How: fmt.Sprintf("%s: %v", field, value)})
	}
	return root.Pack(), nil
}

var tomlEnabledRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^([ \t]*enabled[ \t]*=[ \t]*)true\b`) })

// editTOML sets enabled = false in each server's [mcp_servers.NAME] table,
// as text: a line enabled = true has its value changed, else the line is
// added under the table's header.
func (m *Migration) editTOML(names []string) ([]byte, error) {
	root, err := m.root()
	if err != nil {
		return nil, err
	}
	data := m.s.data
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	blocks := tomlBlocks(data)
	for _, name := range names {
		entry, ok := lookup(root, []string{m.s.keys[0], name}).(map[string]any)
		if !ok {
			continue // absent, or not a table: the host would not start it
		}
		if entry["enabled"] == false {
			m.Off = append(m.Off, name)
			continue
		}
		i := slices.IndexFunc(blocks, func(b tomlBlock) bool {
			return !b.array && slices.Equal(b.key, []string{m.s.keys[0], name})
		})
		if i < 0 {
			m.Kept = append(m.Kept, Kept{name, fmt.Sprintf("it is not written as a [%s.%s] table (hint: add enabled = false to it by hand)", m.s.keys[0], name)})
			continue
		}
		b := blocks[i]
		header := lineEnd(data, b.start)
		switch loc := tomlEnabledRE().FindSubmatchIndex(data[header:max(b.end, header)]); {
		case loc != nil:
			at := header + loc[3] // after "enabled = "
			edits = append(edits, edit{at, at + len("true"), "false"})
		case entry["enabled"] != nil:
			m.Kept = append(m.Kept, Kept{name, "its enabled is not written as enabled = true (hint: set enabled = false by hand)"})
			continue
		case header > 0 && data[header-1] != '\n':
			edits = append(edits, edit{header, header, "\nenabled = false\n"})
		default:
			edits = append(edits, edit{header, header, "enabled = false\n"})
		}
		m.Turned = append(m.Turned, Turned{Name: name, Path: joinPath(m.Key, name), How: "enabled = false"})
	}
	out := slices.Clone(data)
	slices.SortFunc(edits, func(a, b edit) int { return b.start - a.start })
	for _, e := range edits {
		out = slices.Concat(out[:e.start], []byte(e.text), out[e.end:])
	}
	return out, nil
}

// check verifies out: it parses, and differs from the file as read only in
// the servers turned off, each the host's way. A file that was strict JSON
// stays strict JSON.
func (m *Migration) check(out []byte) error {
	after, err := m.s.decode(out)
	if err != nil {
		return err
	}
	want, err := m.root()
	if err != nil {
		return err
	}
	servers, _ := lookup(want, m.s.keys).(map[string]any)
	field, value := offField(m.Host, m.s.keys)
	for _, t := range m.Turned {
		if field == "" {
			delete(servers, t.Name)
			continue
		}
		servers[t.Name].(map[string]any)[field] = value
	}
	if !reflect.DeepEqual(want, after) {
		return errors.New("it would change more than the servers turned off")
	}
	if !m.s.toml && json.Valid(bytes.TrimSpace(m.s.data)) && !json.Valid(out) {
		return errors.New("the file would no longer be strict JSON")
	}
	return nil
}

// Diff returns the change a write makes, as a unified diff, or "" when it
// makes none.
func (m *Migration) Diff() string {
	if !m.Changes() {
		return ""
	}
	return string(diff.Diff(m.File, m.s.data, m.File, m.out))
}

// Write turns the servers off in the host's file, after a backup (see
// Setup.Write, whose guarantees it shares). A file with nothing to change
// is not written: written is false. With MigrateOptions.Journal, the
// write is recorded there for Undo.
func (m *Migration) Write(now time.Time) (written bool, backup string, err error) {
	switch {
	case m.Err != nil:
		return false, "", fmt.Errorf("%v; not changing it", m.Err)
	case !m.Changes():
		return false, "", nil
	}
	w := hostWrite{host: m.Host, title: m.Title, file: m.File, what: "migrate", data: m.s.data, exists: true, journal: m.s.journal, continues: m.continues}
	return w.commit(m.out, now, m.check)
}
