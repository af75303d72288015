package proxy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTSShape(t *testing.T) {
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"the brief's example",
			`{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}},"mode":{"enum":["fast","slow"]},"opts":{"type":"object","properties":{"deep":{"type":"boolean"}}}},"required":["query","tags","mode"]}`,
			`{ mode: "fast" | "slow"; query: string; tags: string[]; limit?: number; opts?: { deep?: boolean } }`},
		{"no properties", `{"type":"object"}`, `{}`},
		{"nothing", `{}`, `unknown`},
		{"not JSON", `{"type":`, `unknown`},
		{"true", `true`, `unknown`},
		{"false", `false`, `never`},
		{"a type list", `{"type":"object","properties":{"a":{"type":["string","null"]}},"required":["a"]}`, `{ a: string | null }`},
		{"nullable", `{"type":"object","properties":{"a":{"type":"number","nullable":true}}}`, `{ a?: number | null }`},
		{"const", `{"type":"object","properties":{"kind":{"const":"x"}},"required":["kind"]}`, `{ kind: "x" }`},
		{"enum of several kinds", `{"enum":["a",1,true,null,{"o":1}]}`, `"a" | 1 | true | null | unknown`},
		{"anyOf", `{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"number"}}]}`, `string | number[]`},
		{"oneOf not simple", `{"oneOf":[{"type":"string"},{"not":{}}]}`, `unknown`},
		{"allOf of one", `{"allOf":[{"type":"string"}]}`, `string`},
		{"allOf of several", `{"allOf":[{"type":"string"},{"minLength":1}]}`, `unknown`},
		{"array of a union", `{"type":"array","items":{"type":["string","number"]}}`, `(string | number)[]`},
		{"array without items", `{"type":"array"}`, `unknown[]`},
		{"tuple", `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}]}`, `[string, number]`},
		{"draft-07 tuple", `{"type":"array","items":[{"type":"string"},{"type":"boolean"}]}`, `[string, boolean]`},
		{"a map", `{"type":"object","additionalProperties":{"type":"string"}}`, `{ [key: string]: string }`},
		{"local ref", `{"type":"object","properties":{"p":{"$ref":"#/$defs/point"}},"required":["p"],"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"]}}}`,
			`{ p: { x: number; y: number } }`},
		{"definitions ref", `{"$ref":"#/definitions/s","definitions":{"s":{"type":"string"}}}`, `string`},
		{"remote ref", `{"$ref":"https://example.com/s.json"}`, `unknown`},
		{"missing ref", `{"$ref":"#/$defs/nope"}`, `unknown`},
		{"a ref to itself", `{"type":"object","properties":{"next":{"$ref":"#"}}}`, `{ next?: { next?: { next?: object } } }`},
		{"depth", `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"object","properties":{"c":{"type":"object","properties":{"d":{"type":"string"}}}}}}}}}`,
			`{ a?: { b?: { c?: object } } }`},
		{"names that are not identifiers", `{"type":"object","properties":{"a-b":{"type":"string"},"x\ny":{"type":"string"},"$ok":{"type":"string"}}}`,
			`{ $ok?: string; "a-b"?: string; "x\ny"?: string }`},
		{"enum in a type list with a union inside", `{"type":["object","null"],"properties":{"m":{"enum":["a","b"]}}}`, `{ m?: "a" | "b" } | null`},
		{"union of unions", `{"anyOf":[{"enum":["a","b"]},{"type":"number"}]}`, `("a" | "b") | number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tsShape(json.RawMessage(tc.schema), 0); got != tc.want {
				t.Errorf("tsShape(%s)\ngot  %s\nwant %s", tc.schema, got, tc.want)
			}
		})
	}
}

// TestTSShapeGoValues: a schema built in Go (typed slices, ints) renders
// as its JSON does.
func TestTSShapeGoValues(t *testing.T) {
	schema := map[string]any{"type": "object", "required": []string{"n"}, "properties": map[string]any{
		"n": map[string]any{"type": "integer", "enum": []int{1, 2}}}}
	if got, want := tsShape(schema, 0), `{ n: 1 | 2 }`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestTSShapeBounds: a schema that would flood the answer is cut, and
// what is cut is counted.
func TestTSShapeBounds(t *testing.T) {
	props := map[string]any{}
	for i := range 500 {
		props[fmt.Sprintf("p%03d", i)] = map[string]any{"type": "string"}
	}
	got := tsShape(map[string]any{"type": "object", "properties": props}, 0)
	if !strings.HasSuffix(got, "; … 476 more }") || len(got) > MaxShape {
		t.Errorf("500 properties: got %d bytes: %s", len(got), got)
	}

	var members []any
	for i := range 100 {
		members = append(members, fmt.Sprint("v", i))
	}
	got = tsShape(map[string]any{"enum": members}, 0)
	if !strings.HasSuffix(got, `"v11" | … 88 more`) {
		t.Errorf("100 enum members: got %s", got)
	}

	long := map[string]any{"type": "object", "properties": map[string]any{strings.Repeat("é", 3000): map[string]any{"type": "string"}}}
	got = tsShape(long, 500)
	if len(got) > 500 || !utf8.ValidString(got) || !strings.Contains(got, "more bytes)") {
		t.Errorf("a 6000-byte name cut to 500: got %d bytes, valid UTF-8 %v: %.80s…", len(got), utf8.ValidString(got), got)
	}

	// Refs that fan out: each definition is a union of six refs to the
	// next, nine deep (6^9 paths). The work is bounded.
	defs := map[string]any{"d9": map[string]any{"type": "string"}}
	for i := 8; i >= 0; i-- {
		var alts []any
		for range 6 {
			alts = append(alts, map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i+1)})
		}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"anyOf": alts}
	}
	got = tsShape(map[string]any{"$ref": "#/$defs/d0", "$defs": defs}, 0)
	if len(got) > MaxShape {
		t.Errorf("fanned-out refs: got %d bytes", len(got))
	}
}

// FuzzTSShape: any input renders without panicking, within the bound, as
// valid UTF-8 when the input is.
func FuzzTSShape(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":["string","null"]}},"required":["a"]}`,
		`{"$ref":"#","anyOf":[{"$ref":"#"}]}`,
		`{"type":"array","items":[{"enum":[1,"x",null]}],"prefixItems":{"a":1}}`,
		`{"properties":{"":{"const":{"x":[1]}}},"required":"x","additionalProperties":{"$ref":"#/properties"}}`,
		`{"$ref":"#/a~1b/~0","a/b":{"~":{"type":"boolean"}}}`,
		`[1,2]`, `"x"`, `null`, `{"type":7,"enum":[],"oneOf":{}}`,
	} {
		f.Add([]byte(s), 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		got := tsShape(json.RawMessage(data), limit)
		bound := limit
		if bound <= 0 {
			bound = MaxShape
		}
		bound = max(bound, minShape)
		if len(got) > bound {
			t.Fatalf("got %d bytes, bound %d", len(got), bound)
		}
		if utf8.Valid(data) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 from valid input: %q", got)
		}
	})
}
