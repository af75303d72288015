package proxy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSchemaIsPortable: the mcp tool's own schema has nothing the
// single-type dialects reject. On main, search and args had type lists
// (["string","array"], ["object","string"]), which the Inspector's
// --strict reports and Gemini's function declarations refuse.
func TestSchemaIsPortable(t *testing.T) {
	var s map[string]any
	if err := json.Unmarshal([]byte(Schema), &s); err != nil {
		t.Fatal(err)
	}
	if got := Portable(s); len(got) > 0 {
		t.Errorf("the mcp tool's schema is not portable: %q", got)
	}
}

// TestSchemaTakesWhatParseAdvertises: what the schema lists, Parse takes,
// and the forms it takes without advertising them still parse.
func TestSchemaTakesWhatParseAdvertises(t *testing.T) {
	for _, raw := range []string{
		`{"search":"a"}`,
		`{"search":["a","b"]}`,
		`{"tool":"t","args":{"x":1}}`,
		`{"tool":"t","args":"{\"x\":1}"}`, // a string, not advertised, still taken
	} {
		if _, err := Parse(json.RawMessage(raw)); err != nil {
			t.Errorf("Parse(%s): %v", raw, err)
		}
	}
}

func TestPortable(t *testing.T) {
	for _, c := range []struct {
		name   string
		schema string
		want   []string
	}{
		{"plain", `{"type":"object","properties":{"a":{"type":"string"},"b":{"anyOf":[{"type":"string"},{"type":"integer"}]}},"additionalProperties":false}`, nil},
		{"type list", `{"type":"object","properties":{"a":{"type":["string","null"]}}}`,
			[]string{`type list ["string","null"] at /properties/a (use one type, or anyOf)`}},
		{"nested in items", `{"type":"object","properties":{"xs":{"type":"array","items":{"type":["object","string"]}}}}`,
			[]string{`type list ["object","string"] at /properties/xs/items (use one type, or anyOf)`}},
		{"bare true", `{"type":"object","properties":{"any":true}}`, []string{`bare true for a schema at /properties/any`}},
		{"additionalProperties true is fine", `{"type":"object","additionalProperties":true}`, nil},
		{"remote ref", `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`,
			[]string{`$ref to another document (https://example.com/s.json) at /properties/a`}},
		{"local ref is fine", `{"type":"object","properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`, nil},
		{"keywords", `{"type":"object","allOf":[{"type":"object"}],"patternProperties":{"^x":{"type":"string"}}}`,
			[]string{`"allOf" at /`, `"patternProperties" at /`}},
		{"escaped name", `{"type":"object","properties":{"a/b":{"type":["string","number"]}}}`,
			[]string{`type list ["string","number"] at /properties/a~1b (use one type, or anyOf)`}},
		{"bounded", `{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":["string","null"]},"c":{"type":["string","null"]},"d":{"type":["string","null"]},"e":{"type":["string","null"]}}}`,
			[]string{
				`type list ["string","null"] at /properties/a (use one type, or anyOf)`,
				`type list ["string","null"] at /properties/b (use one type, or anyOf)`,
				`type list ["string","null"] at /properties/c (use one type, or anyOf)`,
				`and 2 more`,
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s any
			if err := json.Unmarshal([]byte(c.schema), &s); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, Portable(s)); diff != "" {
				t.Errorf("Portable(%s) (-want +got):\n%s", c.schema, diff)
			}
			// A schema as a go-sdk server declares it (json.RawMessage).
			if diff := cmp.Diff(c.want, Portable(json.RawMessage(c.schema))); diff != "" {
				t.Errorf("Portable of the raw %s (-want +got):\n%s", c.schema, diff)
			}
		})
	}
}

// TestDescribeSaysUnportable: describe of an upstream tool whose schema the
// single-type dialects reject says so in one line naming the construct,
// and in the details; a portable one has no such line.
func TestDescribeSaysUnportable(t *testing.T) {
	ref := ToolRef{Server: "s", Name: "t"}
	bad := &mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": []any{"string", "null"}}}}}
	r := Describe(ref, bad, false, Agents)
	var lines []string
	for l := range strings.SplitSeq(r.Text, "\n") {
		if strings.HasPrefix(l, "portability: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `type list ["string","null"] at /properties/q`) || !strings.Contains(lines[0], "Gemini") {
		t.Errorf("describe of an unportable schema: portability lines %q in:\n%s", lines, r.Text)
	}
	if got := r.Details.Tool.Unportable; len(got) != 1 {
		t.Errorf("details.tool.unportable = %q, want one finding", got)
	}
	good := &mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}}
	if r := Describe(ref, good, false, Agents); strings.Contains(r.Text, "portability:") || r.Details.Tool.Unportable != nil {
		t.Errorf("describe of a portable schema says it is not:\n%s", r.Text)
	}
}
