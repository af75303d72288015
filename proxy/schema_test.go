package proxy

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestParseRefusesWhatSchemaRefuses holds Parse to the schema the mcp tool
// publishes: serve hands the tool's arguments to Parse as the client wrote
// them, with no check of go-sdk's against the schema first (front's
// addProxyTool), so whatever the schema refuses Parse must refuse too, but
// for what Parse takes on purpose (lenient). Each property gets values of
// every JSON kind, in a request that is otherwise whole.
func TestParseRefusesWhatSchemaRefuses(t *testing.T) {
	check := schemaChecker(t)
	var props struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal([]byte(Schema), &props); err != nil {
		t.Fatal(err)
	}
	values := []string{`null`, `true`, `false`, `0`, `1`, `1.5`, `2.0`, `2e0`, `-1`, `51`, `1e400`, `""`, `" "`, `"x"`,
		`"resources.list"`, `"connect"`, `[]`, `["a"]`, `[1]`, `["a","b","c","d","e","f","g","h","i"]`, `{}`, `{"a":1}`, `"{\"a\":1}"`}
	// A request each property belongs to, whole without it.
	base := map[string]string{
		"search": `{}`, "limit": `{"search":"x"}`, "offset": `{"search":"x"}`, "regex": `{"search":"x"}`,
		"includeSchemas": `{"search":"x"}`, "includeDisabled": `{"search":"x"}`, "describe": `{}`, "tool": `{}`,
		"args": `{"tool":"t"}`, "server": `{}`, "operation": `{"server":"s"}`, "connect": `{}`,
		"resource": `{"operation":"resources.read","server":"s"}`, "prompt": `{"operation":"prompts.get","server":"s"}`,
	}
	for name := range props.Properties {
		b, ok := base[name]
		if !ok {
			t.Errorf("the schema has a property %q this test does not know: give it a request it belongs to", name)
			continue
		}
		for _, v := range values {
			raw := b[:len(b)-1]
			if raw != "{" {
				raw += ","
			}
			check(t, []byte(raw+fmt.Sprintf("%q:%s}", name, v)))
		}
	}
}

// FuzzParseRefusesWhatSchemaRefuses is TestParseRefusesWhatSchemaRefuses
// on any arguments.
func FuzzParseRefusesWhatSchemaRefuses(f *testing.F) {
	for _, s := range []string{`{}`, `{"search":"x","limit":2.0}`, `{"tool":"t","args":null}`, `{"regex":null,"search":"x"}`,
		`{"operation":"connect","server":"s"}`, `{"search":["a",1]}`, `{"describe":"d","includeSchemas":1}`} {
		f.Add([]byte(s))
	}
	check := schemaChecker(f)
	f.Fuzz(func(t *testing.T, raw []byte) { check(t, raw) })
}

// schemaChecker returns a check that Parse refuses raw when the schema
// does, as a go-sdk server would have decoded and validated it.
func schemaChecker(tb testing.TB) func(*testing.T, []byte) {
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(Schema), &s); err != nil {
		tb.Fatal(err)
	}
	resolved, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		tb.Fatal(err)
	}
	return func(t *testing.T, raw []byte) {
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil || m == nil {
			return // not an object: Parse refuses it (TestParse)
		}
		var v any = m
		if resolved.Validate(&v) == nil {
			return
		}
		if r, err := Parse(raw); err == nil && !lenient(m) {
			t.Errorf("the schema refuses %s, Parse takes it as %+v", raw, r)
		}
	}
}

// lenient reports whether the arguments use what Parse takes beyond the
// schema on purpose: args as null (none) or as a string holding an
// object (some models write them so), a search as a list of queries.
func lenient(m map[string]any) bool {
	if a, given := m["args"]; given {
		if _, s := a.(string); s || a == nil {
			return true
		}
	}
	if qs, ok := m["search"].([]any); ok && len(qs) <= MaxNeeds && !slices.ContainsFunc(qs, func(q any) bool { _, s := q.(string); return !s }) {
		return true
	}
	return false
}

// TestParseTakesWholeNumbersAsTheSchemaDoes: JSON Schema's "integer" takes
// a whole number however it is written, and so does Parse.
func TestParseTakesWholeNumbersAsTheSchemaDoes(t *testing.T) {
	for _, n := range []string{`2`, `2.0`, `2e0`, `0.2e1`, `20E-1`} {
		r, err := Parse([]byte(`{"search":"x","limit":` + n + `,"offset":` + n + `}`))
		if err != nil || r.Limit != 2 || r.Offset != 2 {
			t.Errorf("limit and offset %s: %+v, %v", n, r, err)
		}
	}
}
