package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// The renderer below turns a tool's JSON schema into a compact TypeScript
// type, as search and describe show it with includeSchemas:
//
//	{ query: string; limit?: number; mode: "fast" | "slow"; opts?: { deep?: boolean } }
//
// It covers what tools' schemas commonly say (types, required, enums and
// const, arrays and tuples, nested objects, local $refs, anyOf and oneOf,
// a type list such as ["string","null"]) and says unknown for the rest.
// Schemas come from servers, which may be hostile: every part of the
// output is bounded (depth, properties, union members, the work done and
// the length), and what is cut is counted.

// Bounds of a rendered shape.
const (
	// MaxShape bounds a shape, in bytes; a longer one is cut with "…"
	// and the count of bytes left out.
	MaxShape = 2000
	// MaxHitShape bounds the shape of each tool a search lists.
	MaxHitShape = 600

	shapeDepth   = 3   // nested objects shown in full; deeper ones are "object"
	shapeNesting = 8   // schemas within schemas (items, unions, refs) before "unknown"
	shapeProps   = 24  // properties of one object before "… N more"
	shapeMembers = 12  // members of a union or an enum before "… N more"
	shapeNodes   = 400 // schemas visited in all; then "unknown"
)

// tsShape renders a JSON schema (a map, JSON bytes, or anything that
// marshals to a schema) as a compact TypeScript type of at most limit
// bytes (MaxShape when limit is 0 or less; never less than 64). It never fails: what it cannot read
// is unknown.
func tsShape(schema any, limit int) string {
	if limit <= 0 {
		limit = MaxShape
	}
	limit = max(limit, minShape)
	root := schemaValue(schema)
	r := &shaper{root: root, nodes: shapeNodes, limit: limit}
	return cutShape(r.shape(root, 0, 0), limit)
}

// schemaValue returns a schema as decoded JSON: a map, a bool, or nil.
func schemaValue(schema any) any {
	var data []byte
	switch s := schema.(type) {
	case nil:
		return nil
	case bool:
		return s
	case json.RawMessage:
		data = s
	case []byte:
		data = s
	case string:
		data = []byte(s)
	default:
		b, err := json.Marshal(s)
		if err != nil {
			return nil
		}
		data = b
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// shaper renders one schema. nodes is the work left; limit the length
// wanted, past which there is no point in rendering more.
type shaper struct {
	root  any
	nodes int
	limit int
}

// shape renders s; depth counts the objects around it, nesting the
// schemas around it of any kind.
func (r *shaper) shape(s any, depth, nesting int) string {
	r.nodes--
	if r.nodes < 0 || nesting > shapeNesting {
		return "unknown"
	}
	switch v := s.(type) {
	case bool:
		if v {
			return "unknown"
		}
		return "never"
	case map[string]any:
		t := r.schema(v, depth, nesting)
		if b, _ := v["nullable"].(bool); b && t != "unknown" && t != "null" {
			t += " | null"
		}
		return t
	}
	return "unknown"
}

// schema renders an object schema, by what it says first: const, enum,
// $ref, a union, then its type.
func (r *shaper) schema(m map[string]any, depth, nesting int) string {
	if c, ok := m["const"]; ok {
		return literal(c)
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		lits := make([]string, 0, min(len(e), shapeMembers))
		for _, v := range e[:min(len(e), shapeMembers)] {
			lits = append(lits, literal(v))
		}
		return union(distinct(lits), len(e)-len(lits))
	}
	if ref, ok := m["$ref"].(string); ok {
		if target, ok := r.resolve(ref); ok {
			return r.shape(target, depth, nesting+1)
		}
		return "unknown"
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts, ok := m[key].([]any); ok && len(alts) > 0 {
			return r.union(alts, depth, nesting)
		}
	}
	if all, ok := m["allOf"].([]any); ok && len(all) > 0 {
		if len(all) == 1 {
			return r.shape(all[0], depth, nesting+1)
		}
		return "unknown"
	}
	switch t := m["type"].(type) {
	case string:
		return r.typed(t, m, depth, nesting)
	case []any:
		var parts []string
		for _, v := range t[:min(len(t), shapeMembers)] {
			if name, ok := v.(string); ok {
				parts = append(parts, r.typed(name, m, depth, nesting))
			}
		}
		if len(parts) == 0 {
			return "unknown"
		}
		return union(distinct(parts), len(t)-min(len(t), shapeMembers))
	}
	switch {
	case m["properties"] != nil:
		return r.typed("object", m, depth, nesting)
	case m["items"] != nil || m["prefixItems"] != nil:
		return r.typed("array", m, depth, nesting)
	}
	return "unknown"
}

// typed renders a schema of one JSON type.
func (r *shaper) typed(t string, m map[string]any, depth, nesting int) string {
	switch t {
	case "string", "boolean", "null":
		return t
	case "number", "integer":
		return "number"
	case "array":
		return r.array(m, depth, nesting)
	case "object":
		return r.object(m, depth, nesting)
	}
	return "unknown"
}

// union renders the members of anyOf or oneOf, a few of them.
func (r *shaper) union(alts []any, depth, nesting int) string {
	parts := make([]string, 0, min(len(alts), shapeMembers))
	for _, a := range alts[:min(len(alts), shapeMembers)] {
		p := r.shape(a, depth, nesting+1)
		if p == "unknown" {
			return "unknown" // one member not simple: the union is not either
		}
		parts = append(parts, p)
	}
	return union(distinct(parts), len(alts)-len(parts))
}

// array renders an array schema: T[], a tuple [A, B], or unknown[].
func (r *shaper) array(m map[string]any, depth, nesting int) string {
	tuple, _ := m["prefixItems"].([]any)
	if items, ok := m["items"].([]any); ok && tuple == nil {
		tuple = items // draft-07's tuple form
	}
	if tuple != nil {
		parts := make([]string, 0, min(len(tuple), shapeMembers))
		for _, it := range tuple[:min(len(tuple), shapeMembers)] {
			parts = append(parts, r.shape(it, depth, nesting+1))
		}
		if n := len(tuple) - len(parts); n > 0 {
			parts = append(parts, fmt.Sprintf("… %d more", n))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	items, ok := m["items"]
	if !ok {
		return "unknown[]"
	}
	el := r.shape(items, depth, nesting+1)
	if topLevel(el, '|') {
		el = "(" + el + ")"
	}
	return el + "[]"
}

// object renders an object schema's properties, required ones first as
// the schema lists them, to shapeDepth objects deep.
func (r *shaper) object(m map[string]any, depth, nesting int) string {
	props, _ := m["properties"].(map[string]any)
	if len(props) == 0 {
		if extra, ok := m["additionalProperties"].(map[string]any); ok && depth < shapeDepth {
			return "{ [key: string]: " + r.shape(extra, depth+1, nesting+1) + " }"
		}
		if depth == 0 {
			return "{}"
		}
		return "object"
	}
	if depth >= shapeDepth {
		return "object"
	}
	required := map[string]bool{}
	if req, ok := m["required"].([]any); ok {
		for _, v := range req {
			if s, ok := v.(string); ok {
				required[s] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	// Required properties first, each group by name: the order of a
	// decoded map is lost, and a stable order keeps the text stable.
	slices.SortFunc(names, func(a, b string) int {
		if required[a] != required[b] {
			if required[a] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	b.WriteString("{ ")
	shown := 0
	for _, k := range names {
		if shown == shapeProps || b.Len() > r.limit {
			break
		}
		if shown > 0 {
			b.WriteString("; ")
		}
		b.WriteString(propertyName(k))
		if !required[k] {
			b.WriteString("?")
		}
		b.WriteString(": ")
		b.WriteString(r.shape(props[k], depth+1, nesting+1))
		shown++
	}
	if n := len(names) - shown; n > 0 {
		fmt.Fprintf(&b, "; … %d more", n)
	}
	b.WriteString(" }")
	return b.String()
}

// resolve finds a local reference (#, #/$defs/X, #/definitions/X, or any
// JSON pointer into the root schema).
func (r *shaper) resolve(ref string) (any, bool) {
	path, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, false
	}
	cur := r.root
	if path == "" {
		return cur, true
	}
	if !strings.HasPrefix(path, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(path[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// identifier reports whether k is an ASCII identifier: [A-Za-z_$][A-Za-z0-9_$]*.
func identifier(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return k != ""
}

// propertyName is a property's name as TypeScript writes it: as is when it
// is an identifier, else quoted.
func propertyName(k string) string {
	if identifier(k) {
		return k
	}
	return quote(k)
}

// literal renders an enum member or a const as a TypeScript literal.
func literal(v any) string {
	switch x := v.(type) {
	case string:
		return quote(x)
	case json.Number, bool, nil:
		b, _ := json.Marshal(x)
		return string(b)
	case float64:
		b, _ := json.Marshal(x)
		return string(b)
	}
	return "unknown" // an object or array as a value: not written out
}

// quote writes s as a JSON string, which TypeScript reads alike.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(s) != nil {
		return `""`
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// union joins members with |, counting those left out.
func union(parts []string, more int) string {
	for i, p := range parts {
		if topLevel(p, '|') {
			parts[i] = "(" + p + ")"
		}
	}
	if more > 0 {
		parts = append(parts, fmt.Sprintf("… %d more", more))
	}
	return strings.Join(parts, " | ")
}

func distinct(parts []string) []string {
	out := parts[:0]
	for _, p := range parts {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// topLevel reports whether op occurs in the type t outside brackets and
// quoted names.
func topLevel(t string, op byte) bool {
	depth, quoted := 0, false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '{' || c == '[' || c == '(':
			depth++
		case c == '}' || c == ']' || c == ')':
			depth--
		case c == op && depth == 0:
			return true
		}
	}
	return false
}

// minShape is the least a shape may be cut to: room for the note.
const minShape = 64

// cutShape cuts a shape to limit bytes, on a rune boundary, saying how many
// were left out.
func cutShape(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	note := func(n int) string { return fmt.Sprintf("… (%d more bytes)", n) }
	keep := limit - len(note(len(s)))
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + note(len(s)-keep)
}
