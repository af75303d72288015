package config

import (
	"encoding/json"
	"strings"

	"github.com/tailscale/hujson"
)

// Edits of our own files work on the syntax tree, so comments, blank lines
// and the user's indentation survive; only the member that changes is
// written anew, indented like its siblings.

// memberIndex returns the index of key in obj, or -1.
func memberIndex(obj *hujson.Object, key string) int {
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == key {
			return i
		}
	}
	return -1
}

// multiline reports whether obj puts its members on lines of their own, and
// the indentation of those lines.
func multiline(obj *hujson.Object, parentIndent string) (bool, string) {
	if len(obj.Members) > 0 {
		before := string(obj.Members[0].Name.BeforeExtra)
		if i := strings.LastIndexByte(before, '\n'); i >= 0 {
			return true, before[i+1:]
		}
		return false, ""
	}
	after := string(obj.AfterExtra)
	if i := strings.LastIndexByte(after, '\n'); i >= 0 {
		return true, after[i+1:] + "  "
	}
	return true, parentIndent + "  "
}

// setMember sets key in obj to the JSON value val, replacing an existing
// member in place or appending a new one after the last.
func setMember(obj *hujson.Object, key string, val any, parentIndent string) error {
	multi, indent := multiline(obj, parentIndent)
	text, err := marshalAt(val, indent, multi)
	if err != nil {
		return err
	}
	v, err := hujson.Parse(text)
	if err != nil {
		return err
	}
	v.BeforeExtra = hujson.Extra(" ")
	if i := memberIndex(obj, key); i >= 0 {
		v.AfterExtra = obj.Members[i].Value.AfterExtra
		obj.Members[i].Value = v
		return nil
	}
	name := hujson.Value{Value: hujson.String(key)}
	if !multi {
		name.BeforeExtra = hujson.Extra(" ")
		if len(obj.Members) == 0 {
			name.BeforeExtra = nil
		}
		obj.Members = append(obj.Members, hujson.ObjectMember{Name: name, Value: v})
		return nil
	}
	// Comments that trail the last member stay on its line; the closing
	// brace keeps its own indentation.
	after := string(obj.AfterExtra)
	lead, closing := "\n", strings.TrimSuffix(indent, "  ")
	if i := strings.LastIndexByte(after, '\n'); i >= 0 {
		lead, closing = after[:i+1], after[i+1:]
	}
	name.BeforeExtra = hujson.Extra(lead + indent)
	if n := len(obj.Members); n > 0 && obj.Members[n-1].Value.AfterExtra != nil {
		v.AfterExtra = hujson.Extra{} // keep a trailing comma where the file had one
	}
	obj.Members = append(obj.Members, hujson.ObjectMember{Name: name, Value: v})
	obj.AfterExtra = hujson.Extra("\n" + closing)
	return nil
}

// removeMember deletes key from obj and reports whether it was there.
func removeMember(obj *hujson.Object, key string) bool {
	i := memberIndex(obj, key)
	if i < 0 {
		return false
	}
	last := i == len(obj.Members)-1
	trailing := obj.Members[i].Value.AfterExtra
	obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
	if last && len(obj.Members) > 0 {
		obj.Members[len(obj.Members)-1].Value.AfterExtra = trailing
	}
	return true
}

func marshalAt(val any, indent string, multi bool) ([]byte, error) {
	if !multi {
		return json.Marshal(val)
	}
	return json.MarshalIndent(val, indent, "  ")
}

// indentOf returns the indentation of the line a member name starts on.
func indentOf(m *hujson.ObjectMember) string {
	before := string(m.Name.BeforeExtra)
	if i := strings.LastIndexByte(before, '\n'); i >= 0 {
		return before[i+1:]
	}
	return ""
}
