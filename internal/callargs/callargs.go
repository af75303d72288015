// Package callargs types a tool's arguments, given as key=value text, by
// the tool's input schema: the rule the call command and the panel's call
// form share.
package callargs

// How key=value is read: by the tool's input schema, as the catalog
// holds it. A value is taken as the type its parameter declares:
//   - string: the value as written (message=123 is the string "123");
//   - number, integer, boolean, null: the JSON literal (n=3, ok=true);
//   - array, object: JSON (tags='["a","b"]', opts='{"k": 1}');
//   - a union of types: the first of the non-string ones whose JSON the
//     value is, else a string if the union allows one.
// A parameter with no type (or a tool with no schema) keeps the old rule:
// JSON where the value parses, a string otherwise. Required parameters are
// checked before anything is sent, and, when the schema forbids other
// properties, unknown names are refused with the nearest known ones.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/switchboard-mcp/switchboard/proxy"
)

// Schema is the part of a tool's input schema that types its
// arguments. Whatever else a schema says is left to the server.
type Schema struct {
	Properties           map[string]paramSchema `json:"properties"`
	Required             []string               `json:"required"`
	AdditionalProperties json.RawMessage        `json:"additionalProperties"`
}

// paramSchema is one parameter's schema, reduced to the JSON types it
// allows.
type paramSchema struct {
	Type        jsonTypes     `json:"type"`
	Description string        `json:"description"`
	Enum        []any         `json:"enum"`
	AnyOf       []paramSchema `json:"anyOf"`
	OneOf       []paramSchema `json:"oneOf"`
}

// jsonTypes is a schema's "type": one name or a list of them.
type jsonTypes []string

func (t *jsonTypes) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*t = jsonTypes{one}
		return nil
	}
	var many []string
	if json.Unmarshal(b, &many) == nil {
		*t = many
	}
	return nil // another shape says nothing we can use
}

// Error is an argument that does not fit the tool: the caller's mistake,
// a usage error on the command line.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func errorf(format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// Types lists the JSON types the schema allows for a parameter, nil when
// it does not say.
func (s *Schema) Types(name string) []string {
	if s == nil {
		return nil
	}
	return s.Properties[name].types()
}

// Describe is a parameter's description, as the schema gives it.
func (s *Schema) Describe(name string) string {
	if s == nil {
		return ""
	}
	return s.Properties[name].Description
}

// IsRequired reports whether the schema requires a parameter.
func (s *Schema) IsRequired(name string) bool {
	return s != nil && slices.Contains(s.Required, name)
}

// TypeList names types for a person: "a number", "an integer or null".
func TypeList(types []string) string { return typeList(types) }

// Parse reads a tool's input schema as the catalog holds it (any
// JSON value). A schema that does not have the expected shape gives nil:
// its arguments are then taken by the old rule.
func Parse(schema any) *Schema {
	if schema == nil {
		return nil
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var s Schema
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	return &s
}

// types lists the JSON types a parameter allows, from "type", or else
// from the values of "enum" or the branches of "anyOf" and "oneOf"; nil
// when the schema does not say.
func (p paramSchema) types() []string {
	if len(p.Type) > 0 {
		return p.Type
	}
	var out []string
	add := func(t string) {
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for _, v := range p.Enum {
		add(kindOf(v))
	}
	for _, b := range append(append([]paramSchema(nil), p.AnyOf...), p.OneOf...) {
		ts := b.types()
		if ts == nil {
			return nil // a branch of any type: anything goes
		}
		for _, t := range ts {
			add(t)
		}
	}
	return out
}

// Args builds a tool's arguments from key=value pairs by its schema
// (nil: no schema known). tool names the tool in errors, as `"echo" on
// "good"`. An argument that does not fit is a usage error: the command
// line is wrong for this tool.
func Args(pairs []string, s *Schema, tool string) (map[string]any, error) {
	m := map[string]any{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, errorf("argument %q is not key=value", p)
		}
		if _, dup := m[k]; dup {
			return nil, errorf("argument %q is given twice", k)
		}
		val, err := s.value(k, v, tool)
		if err != nil {
			return nil, err
		}
		m[k] = val
	}
	if err := s.check(m, tool); err != nil {
		return nil, err
	}
	return m, nil
}

// value types one argument.
func (s *Schema) value(key, v, tool string) (any, error) {
	if s == nil {
		return jsonOrString(v), nil
	}
	p, declared := s.Properties[key]
	if !declared {
		if s.closed() {
			return nil, s.unknown(key, tool)
		}
		return jsonOrString(v), nil
	}
	types := p.types()
	if len(types) == 0 {
		return jsonOrString(v), nil
	}
	if parsed, ok := parseJSON(v); ok {
		for _, t := range types {
			if t != "string" && fitsType(parsed, v, t) {
				return parsed, nil
			}
		}
	}
	if slices.Contains(types, "string") {
		return v, nil
	}
	return nil, errorf("argument %q of tool %s must be %s, such as %s; got %s",
		key, tool, typeList(types), exampleArg(key, types), proxy.ShellQuote(key+"="+v))
}

// closed reports whether the schema forbids properties it does not list.
func (s *Schema) closed() bool {
	return string(bytes.TrimSpace(s.AdditionalProperties)) == "false"
}

// Names are the parameters the schema lists, sorted.
func (s *Schema) Names() []string {
	if s == nil {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (s *Schema) unknown(key, tool string) error {
	msg := fmt.Sprintf("tool %s has no argument %q", tool, key)
	if near := proxy.Closest(key, s.Names(), 3); len(near) > 0 {
		msg += "; did you mean: " + strings.Join(near, ", ")
	}
	return errorf("%s (its arguments: %s); nothing was called", msg, s.Signature())
}

// check refuses arguments that leave out a required parameter.
func (s *Schema) check(m map[string]any, tool string) error {
	if s == nil {
		return nil
	}
	var missing []string
	for _, r := range s.Required {
		if _, ok := m[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var needs []string
	for _, r := range missing {
		if ts := s.Properties[r].types(); len(ts) > 0 {
			needs = append(needs, fmt.Sprintf("%q (%s, such as %s)", r, typeList(ts), exampleArg(r, ts)))
		} else {
			needs = append(needs, fmt.Sprintf("%q", r))
		}
	}
	return errorf("tool %s needs %s (its arguments: %s); nothing was called", tool, strings.Join(needs, ", "), s.Signature())
}

// Signature lists the parameters, required ones marked with *.
func (s *Schema) Signature() string {
	names := s.Names()
	if len(names) == 0 {
		return "none"
	}
	for i, n := range names {
		if slices.Contains(s.Required, n) {
			names[i] += "*"
		}
	}
	return strings.Join(names, ", ")
}

// parseJSON parses v as one JSON value, keeping numbers as written.
func parseJSON(v string) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(v))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil || dec.More() {
		return nil, false
	}
	return out, true
}

// jsonOrString parses v as JSON if it is JSON, else keeps the string.
func jsonOrString(v string) any {
	if out, ok := parseJSON(v); ok {
		return out
	}
	return v
}

// kindOf is the JSON type of a decoded value.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// fitsType reports whether parsed (decoded from raw) is of JSON type t. An
// integer is a number written without a fraction or exponent, so that it
// decodes into an integer on the server's side.
func fitsType(parsed any, raw, t string) bool {
	k := kindOf(parsed)
	switch {
	case t == "integer":
		return k == "number" && !strings.ContainsAny(raw, ".eE")
	default:
		return k == t
	}
}

func typeList(types []string) string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = article(t)
	}
	if len(out) == 1 {
		return out[0]
	}
	return strings.Join(out[:len(out)-1], ", ") + " or " + out[len(out)-1]
}

func article(t string) string {
	switch t {
	case "integer", "array", "object":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}

// exampleArg shows key=value for a value of the first of types other than
// null (unless null is all there is), as typed in a shell.
func exampleArg(key string, types []string) string {
	t := types[0]
	if i := slices.IndexFunc(types, func(t string) bool { return t != "null" }); i >= 0 {
		t = types[i]
	}
	switch t {
	case "number":
		return key + "=1.5"
	case "integer":
		return key + "=3"
	case "boolean":
		return key + "=true"
	case "null":
		return key + "=null"
	case "array":
		return key + `='["a","b"]'`
	case "object":
		return key + `='{"key":"value"}'`
	}
	return key + "=text"
}
