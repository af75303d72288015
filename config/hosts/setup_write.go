package hosts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/switchboard-mcp/switchboard/internal/jsonc"
	"github.com/tailscale/hujson"
)

// Write adds the entry to the host's file. It is one of the two places
// Switchboard writes a file that is not its own (Migration.Write is the
// other): call it only when a person asked for it, as switchboard setup
// HOST --write does.
//
// A missing file is created, and its directory, private. An existing file
// is first copied to FILE.switchboard-backup-<UTC time>, with its mode;
// then only the one entry changes, every other byte stays (~/.claude.json
// also holds Claude Code's accounts, caches and per-project state), and the
// result is written atomically, read back and checked. Write refuses,
// changing nothing, when the file cannot be read or parsed, when it changed
// since it was planned, or when it defines the name otherwise, unless force
// is set. A file that is already set up is not written: written is false.
// With SetupOptions.Journal, the write is recorded there for Undo.
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
	w := hostWrite{host: s.Host, title: s.Title, file: s.File, what: "setup", data: s.data, exists: s.State != SetupNoFile, journal: s.journal}
	return w.commit(out, now, s.check)
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
