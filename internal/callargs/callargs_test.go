package callargs

import (
	"encoding/json"
	"strings"
	"testing"
)

const testSchema = `{"type": "object", "additionalProperties": false, "required": ["s"],
 "properties": {
  "s": {"type": "string"}, "n": {"type": "number"}, "i": {"type": "integer"},
  "b": {"type": "boolean"}, "a": {"type": "array"}, "o": {"type": "object"},
  "sn": {"type": ["string", "number"]}, "in": {"type": ["integer", "null"]},
  "e": {"enum": ["x", "y"]}, "en": {"enum": [1, 2]},
  "any": {"anyOf": [{"type": "boolean"}, {"type": "string"}]},
  "free": {}, "free2": {"anyOf": [{"type": "integer"}, {}]}
 }}`

func TestTypedArgs(t *testing.T) {
	var raw any
	if err := json.Unmarshal([]byte(testSchema), &raw); err != nil {
		t.Fatal(err)
	}
	s := Parse(raw)
	tests := []struct {
		pair, want string // want is the argument's JSON, or an error's start
	}{
		{"s=123", `"123"`},
		{"s=true", `"true"`},
		{`s="quoted"`, `"\"quoted\""`},
		{"s=", `""`},
		{"n=1.5", `1.5`},
		{"n=3", `3`},
		{"n=1e3", `1e3`},
		{"n=x", `error: argument "n" of tool "t" must be a number, such as n=1.5; got n=x`},
		{"i=3", `3`},
		{"i=-4", `-4`},
		{"i=3.0", `error: argument "i" of tool "t" must be an integer`},
		{"i=1e2", `error: argument "i"`},
		{"b=false", `false`},
		{"b=1", `error: argument "b" of tool "t" must be a boolean, such as b=true; got b=1`},
		{`a=["x",1]`, `["x",1]`},
		{"a=x", `error: argument "a" of tool "t" must be an array, such as a='["a","b"]'; got a=x`},
		{`o={"k":[1]}`, `{"k":[1]}`},
		{"o=[]", `error: argument "o" of tool "t" must be an object`},
		{"sn=7", `7`},
		{"sn=seven", `"seven"`},
		{"in=null", `null`},
		{"in=2", `2`},
		{"in=two", `error: argument "in" of tool "t" must be an integer or null, such as in=3; got in=two`},
		{"e=x", `"x"`},
		{"en=2", `2`},
		{"en=two", `error: argument "en" of tool "t" must be a number`},
		{"any=true", `true`},
		{"any=maybe", `"maybe"`},
		{"free=12", `12`},
		{"free=twelve", `"twelve"`},
		{"free2=twelve", `"twelve"`},
		{"sn2=1", `error: tool "t" has no argument "sn2"; did you mean: sn (its arguments: `},
	}
	for _, tt := range tests {
		t.Run(tt.pair, func(t *testing.T) {
			pairs := []string{tt.pair}
			if !strings.HasPrefix(tt.pair, "s=") {
				pairs = append(pairs, "s=x")
			}
			got, err := Args(pairs, s, `"t"`)
			if strings.HasPrefix(tt.want, "error: ") {
				if err == nil || !strings.HasPrefix(err.Error(), strings.TrimPrefix(tt.want, "error: ")) {
					t.Fatalf("got %v, %v; want an error starting %q", got, err, strings.TrimPrefix(tt.want, "error: "))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			key, _, _ := strings.Cut(tt.pair, "=")
			b, _ := json.Marshal(got[key])
			if string(b) != tt.want {
				t.Errorf("got %s, want %s", b, tt.want)
			}
		})
	}
}

func TestTypedArgsRequired(t *testing.T) {
	var raw any
	json.Unmarshal([]byte(testSchema), &raw)
	_, err := Args([]string{"n=1"}, Parse(raw), `"t"`)
	want := `tool "t" needs "s" (a string, such as s=text) (its arguments: a, any, b, e, en, free, free2, i, in, n, o, s*, sn); nothing was called`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestTypedArgsWithoutSchema keeps the rule of old for tools whose schema
// is unknown or says nothing: JSON where it parses, else a string.
func TestTypedArgsWithoutSchema(t *testing.T) {
	for _, schema := range []any{nil, "not an object", map[string]any{"properties": 5}, map[string]any{"type": "object"}} {
		got, err := Args([]string{"n=3", "s=Ada", `t=["a"]`}, Parse(schema), `"t"`)
		if err != nil {
			t.Fatalf("schema %v: %v", schema, err)
		}
		b, _ := json.Marshal(got)
		if string(b) != `{"n":3,"s":"Ada","t":["a"]}` {
			t.Errorf("schema %v: got %s", schema, b)
		}
	}
}

// FuzzTypedArgs: any schema a server sends and any value a person types
// give arguments or an error, never a panic; a string parameter always
// gets the value as written.
func FuzzTypedArgs(f *testing.F) {
	f.Add(testSchema, "s", "123")
	f.Add(`{"properties": {"x": {"type": ["integer", "string"]}}}`, "x", "1.0")
	f.Add(`{"properties": {"x": {"anyOf": [{"anyOf": [{"type": 5}]}]}}}`, "x", "[")
	f.Add(`{"required": [1, null], "properties": []}`, "x", "")
	f.Fuzz(func(t *testing.T, schema, key, value string) {
		var raw any
		if json.Unmarshal([]byte(schema), &raw) != nil || key == "" || strings.Contains(key, "=") {
			return
		}
		s := Parse(raw)
		got, err := Args([]string{key + "=" + value}, s, `"t"`)
		if err != nil {
			return
		}
		if _, ok := got[key]; !ok {
			t.Fatalf("no %q in %v", key, got)
		}
		if s != nil {
			if p, ok := s.Properties[key]; ok && len(p.Type) == 1 && p.Type[0] == "string" && got[key] != value {
				t.Fatalf("string parameter got %#v, want %q", got[key], value)
			}
		}
	})
}
