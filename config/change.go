package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/internal/jsonc"
)

// FieldEdit is one change to a server's definition as written: Field set
// to Value, or removed with Remove. With Key, the change is to that key of
// the object Field (an env variable, a header): the object is created when
// missing and removed when its last key goes.
type FieldEdit struct {
	Field  string
	Key    string
	Value  any // a JSON value; unused with Remove
	Remove bool
}

// Edit is a planned change of one of our files, as ChangeServer and
// SetEmbeddings return it: the file before and after. Nothing is written
// until Write.
type Edit struct {
	Path          string
	Before, After []byte // Before is nil when the file does not exist
	scope         Scope
	d             Dirs
}

// Changed reports whether the edit changes the file.
func (e *Edit) Changed() bool { return (&fileEdit{data: e.Before, out: e.After}).changed() }

// Diff returns the change as a unified diff, or "" when there is none.
func (e *Edit) Diff() string {
	if !e.Changed() {
		return ""
	}
	return string(diff.Diff(e.Path, e.Before, e.Path, e.After))
}

// Write writes the file atomically, as AddServer does. A project file that
// was trusted as it was stays trusted.
func (e *Edit) Write() error {
	return (&fileEdit{path: e.Path, data: e.Before, out: e.After}).commit(e.d, e.scope)
}

func newEdit(d Dirs, scope Scope, p *fileEdit) *Edit {
	return &Edit{Path: p.path, Before: p.data, After: p.out, scope: scope, d: d}
}

// ChangeServer plans edits to the definition of server name in our file
// of the given scope, in place: only the members that change are written
// anew, so comments, order and the other servers survive. The result is
// validated as AddServer's is; an edit that would not validate is an error
// naming the field, and nothing is to be written.
func ChangeServer(d Dirs, scope Scope, name string, edits []FieldEdit) (*Edit, error) {
	p, err := planServers(d, scope, name, func(e serversEdit) error {
		if e.member < 0 {
			return fmt.Errorf("%w %q: it is not defined in %s", ErrUnknownServer, name, e.path)
		}
		m := &e.servers.Members[e.member]
		obj, ok := m.Value.Value.(*hujson.Object)
		if !ok {
			return fmt.Errorf("not changing %s: mcpServers.%s is not an object", e.path, name)
		}
		indent := jsonc.IndentOf(m)
		for _, fe := range edits {
			if err := fe.apply(obj, indent, "mcpServers."+name, e.path); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return newEdit(d, scope, p), nil
}

func (fe FieldEdit) apply(obj *hujson.Object, indent, path, file string) error {
	if fe.Key == "" {
		if fe.Remove {
			jsonc.RemoveMember(obj, fe.Field)
			return nil
		}
		return jsonc.SetMember(obj, fe.Field, fe.Value, indent)
	}
	i := jsonc.MemberIndex(obj, fe.Field)
	if i < 0 {
		if fe.Remove {
			return nil
		}
		return jsonc.SetMember(obj, fe.Field, map[string]any{fe.Key: fe.Value}, indent)
	}
	sub, ok := obj.Members[i].Value.Value.(*hujson.Object)
	if !ok {
		return fmt.Errorf("not changing %s: %s.%s is not an object", file, path, fe.Field)
	}
	if !fe.Remove {
		return jsonc.SetMember(sub, fe.Key, fe.Value, jsonc.IndentOf(&obj.Members[i]))
	}
	jsonc.RemoveMember(sub, fe.Key)
	if len(sub.Members) == 0 {
		jsonc.RemoveMember(obj, fe.Field)
	}
	return nil
}

// SetEmbeddings plans edits to settings.embeddings in our file of the given
// scope, as ChangeServer does for a server: each edit sets or removes a
// field of it ("baseUrl", "apiKey", "model"). With off, the section is
// removed instead. The result is validated as every write is, so an API
// key that is not a reference is refused.
func SetEmbeddings(d Dirs, scope Scope, edits []FieldEdit, off bool) (*Edit, error) {
	p, err := planEdit(d, scope, "", func(path string, top *hujson.Object) error {
		i := jsonc.MemberIndex(top, "settings")
		if i < 0 {
			if off {
				return nil
			}
			if err := jsonc.SetMember(top, "settings", map[string]any{}, ""); err != nil {
				return err
			}
			i = jsonc.MemberIndex(top, "settings")
		}
		settings, ok := top.Members[i].Value.Value.(*hujson.Object)
		if !ok {
			return fmt.Errorf("not changing %s: settings must be an object", path)
		}
		if off {
			jsonc.RemoveMember(settings, "embeddings")
			if len(settings.Members) == 0 && strings.TrimSpace(string(settings.AfterExtra)) == "" {
				jsonc.RemoveMember(top, "settings") // it held only the embeddings
			}
			return nil
		}
		indent := jsonc.IndentOf(&top.Members[i])
		for _, fe := range edits {
			fe.Key, fe.Field = fe.Field, "embeddings"
			if err := fe.apply(settings, indent, "settings", path); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return newEdit(d, scope, p), nil
}

// ServerFields returns the fields a server definition of ours may hold.
func ServerFields() []string { return slices.Clone(serverFields) }
