package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Request
	}{
		{``, Request{Action: ActionStatus, Limit: DefaultLimit}},
		{`{}`, Request{Action: ActionStatus, Limit: DefaultLimit}},
		{`{"server":"gh"}`, Request{Action: ActionServer, Server: "gh", Limit: DefaultLimit}},
		{`{"search":"create issue"}`, Request{Action: ActionSearch, Query: "create issue", Limit: DefaultLimit}},
		{`{"search":"x","server":"gh","limit":5,"offset":10,"regex":true}`, Request{Action: ActionSearch, Query: "x", Server: "gh", Limit: 5, Offset: 10, Regex: true}},
		{`{"search":["write a file","current date"]}`, Request{Action: ActionSearch, Query: "write a file; current date", Queries: []string{"write a file", "current date"}, Limit: DefaultLimit}},
		{`{"search":["one need"],"limit":3}`, Request{Action: ActionSearch, Query: "one need", Queries: []string{"one need"}, Limit: 3}},
		{`{"describe":"echo"}`, Request{Action: ActionDescribe, Name: "echo", Limit: DefaultLimit}},
		{`{"tool":"echo"}`, Request{Action: ActionCall, Name: "echo", Args: map[string]any{}, Limit: DefaultLimit}},
		{`{"tool":"echo","args":null}`, Request{Action: ActionCall, Name: "echo", Args: map[string]any{}, Limit: DefaultLimit}},
		{`{"tool":"echo","args":{"message":"hi","n":2}}`, Request{Action: ActionCall, Name: "echo", Args: map[string]any{"message": "hi", "n": json.Number("2")}, Limit: DefaultLimit}},
		{`{"tool":"echo","args":"{\"message\":\"hi\"}"}`, Request{Action: ActionCall, Name: "echo", Args: map[string]any{"message": "hi"}, Limit: DefaultLimit}},
		{`{"tool":"echo","args":""}`, Request{Action: ActionCall, Name: "echo", Args: map[string]any{}, Limit: DefaultLimit}},
		{`{"operation":"resources.list","server":"fs"}`, Request{Action: ActionResourcesList, Server: "fs", Limit: DefaultLimit}},
		{`{"operation":"resources.read","server":"fs","resource":"r1"}`, Request{Action: ActionResourcesRead, Server: "fs", Resource: "r1", Limit: DefaultLimit}},
		{`{"operation":"prompts.list","server":"e"}`, Request{Action: ActionPromptsList, Server: "e", Limit: DefaultLimit}},
		{`{"operation":"prompts.get","server":"e","prompt":"p"}`, Request{Action: ActionPromptsGet, Server: "e", Prompt: "p", Args: map[string]any{}, Limit: DefaultLimit}},
		{`{"operation":"instructions","server":"e"}`, Request{Action: ActionInstructions, Server: "e", Limit: DefaultLimit}},
		{`{"operation":"reconnect","server":"e"}`, Request{Action: ActionReconnect, Server: "e", Limit: DefaultLimit}},
		{`{"connect":"e"}`, Request{Action: ActionConnect, Server: "e", Limit: DefaultLimit}},
		{`{"operation":"connect","server":"e"}`, Request{Action: ActionConnect, Server: "e", Limit: DefaultLimit}},
		{`{"action":"reconnect","server":"e"}`, Request{Action: ActionReconnect, Server: "e", Limit: DefaultLimit}},
		{`{"action":"auth-start","server":"e"}`, Request{Action: ActionAuthStart, Server: "e", Limit: DefaultLimit}},
		{`{"action":"auth-complete","server":"e","args":{"redirectUrl":" http://127.0.0.1:5/callback?code=c&state=s "}}`,
			Request{Action: ActionAuthComplete, Server: "e", RedirectURL: "http://127.0.0.1:5/callback?code=c&state=s", Limit: DefaultLimit}},
		{`{"action":"auth-complete","server":"e","args":"{\"code\":\"c1\"}"}`, Request{Action: ActionAuthComplete, Server: "e", Code: "c1", Limit: DefaultLimit}},
		{`{"search":"x","includeSchemas":true,"includeDisabled":true}`, Request{Action: ActionSearch, Query: "x", Limit: DefaultLimit, IncludeSchemas: true, IncludeDisabled: true}},
		{`{"search":"x","include_disabled":true}`, Request{Action: ActionSearch, Query: "x", Limit: DefaultLimit, IncludeDisabled: true}},
		{`{"search":"x","includeDisabled":false}`, Request{Action: ActionSearch, Query: "x", Limit: DefaultLimit}},
		{`{"describe":"echo","includeSchemas":true}`, Request{Action: ActionDescribe, Name: "echo", Limit: DefaultLimit, IncludeSchemas: true}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse([]byte(tt.in))
			if err != nil {
				t.Fatalf("Parse(%s): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("Parse(%s) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantMsg string
	}{
		{`[]`, "must be a JSON object"},
		{`{"bogus":1}`, `unknown field "bogus"`},
		{`{"search":"x","includeSchemas":"yes"}`, "includeSchemas must be true or false"},
		{`{"search":"x","include_disabled":1}`, "include_disabled must be true or false"},
		{`{"search":"x","includeDisabled":true,"include_disabled":true}`, "includeDisabled and include_disabled are the same field: give one"},
		{`{"describe":"x","includeDisabled":true}`, `field "includeDisabled" does not belong to a describe request (it takes describe, server, includeSchemas)`},
		{`{"tool":"x","includeSchemas":true}`, `field "includeSchemas" does not belong to a call request`},
		{`{"search":"x","tool":"y"}`, `one action at a time: "search", "tool"`},
		{`{"describe":"x","operation":"instructions"}`, "one action at a time"},
		{`{"search":""}`, "search must not be empty"},
		{`{"server":"  "}`, "server must not be empty"},
		{`{"search":3}`, "search must be a string or a list of strings"},
		{`{"search":[]}`, "search must not be an empty list: give one query per need"},
		{`{"search":["a",""]}`, "search query 2 of 2 is empty"},
		{`{"search":["a"," "]}`, "search query 2 of 2 is empty"},
		{`{"search":["a",3]}`, "search must be a string or a list of strings"},
		{`{"search":[["a"]]}`, "search must be a string or a list of strings"},
		{`{"search":null}`, "search must not be empty"},
		{`{"search":["1","2","3","4","5","6","7","8","9"]}`, "search takes at most 8 queries; got 9"},
		{`{"search":"x","args":{}}`, `field "args" does not belong to a search request`},
		{`{"tool":"x","limit":3}`, `field "limit" does not belong to a call request`},
		{`{"describe":"x","resource":"r"}`, `field "resource" does not belong`},
		{`{"server":"s","limit":3}`, `field "limit" does not belong to a server request`},
		{`{"limit":3}`, `field "limit" does not belong to a status request`},
		{`{"search":"x","limit":0}`, "limit must be a whole number from 1 to 50"},
		{`{"search":"x","limit":51}`, "limit must be a whole number from 1 to 50"},
		{`{"search":"x","limit":2.5}`, "limit must be a whole number"},
		{`{"search":"x","offset":-1}`, "offset must be a whole number"},
		{`{"search":"x","regex":"yes"}`, "regex must be true or false"},
		{`{"tool":"x","args":[1]}`, "args must be a JSON object"},
		{`{"tool":"x","args":"[1]"}`, "args must be a JSON object"},
		{`{"tool":"x","args":"{\"a\":1} trailing"}`, "args must be a JSON object"},
		{`{"tool":"x","args":7}`, "args must be a JSON object"},
		{`{"operation":"resources.delete","server":"s"}`, `unknown operation "resources.delete"`},
		{`{"operation":7}`, "operation must be a string"},
		{`{"operation":"resources.list"}`, `operation "resources.list" needs "server"`},
		{`{"operation":"resources.read","server":"s"}`, `resources.read needs "resource"`},
		{`{"operation":"prompts.get","server":"s"}`, `prompts.get needs "prompt"`},
		{`{"operation":"prompts.list","server":"s","prompt":"p"}`, `field "prompt" does not belong to a prompts.list request`},
		{`{"connect":""}`, "connect must not be empty"},
		{`{"connect":"a","server":"a"}`, `"connect" names the server: leave out "server"`},
		{`{"connect":"a","search":"x"}`, "one action at a time"},
		{`{"operation":"connect"}`, `operation "connect" needs "server"`},
		{`{"action":"auth-start"}`, `operation "auth-start" needs "server"`},
		{`{"action":"auth-start","operation":"auth-start","server":"s"}`, `"action" is another name of "operation"`},
		{`{"action":"launch","server":"s"}`, `unknown operation "launch"`},
		{`{"action":"auth-start","server":"s","args":{}}`, `field "args" does not belong to a auth-start request`},
		{`{"action":"auth-complete","server":"s"}`, `auth-complete needs args with "redirectUrl"`},
		{`{"action":"auth-complete","server":"s","args":{"code":" "}}`, "args.code must be a non-empty string"},
		{`{"action":"auth-complete","server":"s","args":{"redirectUrl":7}}`, "args.redirectUrl must be a non-empty string"},
		{`{"action":"auth-complete","server":"s","args":{"code":"c","redirectUrl":"u"}}`, "not both"},
		{`{"action":"auth-complete","server":"s","args":{"code":"c","state":"x"}}`, `not "state"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("Parse(%s) = %v, want a *RequestError", tt.in, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("Parse(%s) = %q, want it to contain %q", tt.in, err, tt.wantMsg)
			}
			if re.Example == "" {
				t.Errorf("Parse(%s) error has no corrective example", tt.in)
			} else if _, err := Parse([]byte(re.Example)); err != nil {
				t.Errorf("the example %s of the error for %s is itself invalid: %v", re.Example, tt.in, err)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `{"search":"x","limit":3}`, `{"search":["a","b"]}`, `{"tool":"t","args":"{\"a\":[1,2]}"}`, `{"operation":"prompts.get","server":"s","prompt":"p","args":{}}`, `null`, `{"tool":"x","args":"null"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data)
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) {
				t.Fatalf("Parse returned %T, want *RequestError", err)
			}
			return
		}
		if (r.Action == ActionCall || r.Action == ActionPromptsGet) && r.Args == nil {
			t.Fatalf("%s request with nil args", r.Action)
		}
		if r.Limit < 1 || r.Limit > MaxLimit || r.Offset < 0 {
			t.Fatalf("limit %d / offset %d out of range", r.Limit, r.Offset)
		}
	})
}

func TestSchemaIsValidJSONAndMatchesParse(t *testing.T) {
	var s struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal([]byte(Schema), &s); err != nil {
		t.Fatalf("Schema is not JSON: %v", err)
	}
	for _, f := range allFields {
		_, ok := s.Properties[f]
		switch {
		case !ok && !contains(unlisted, f):
			t.Errorf("Schema lacks field %q that Parse accepts", f)
		case ok && contains(unlisted, f):
			t.Errorf("Schema lists field %q that should be unlisted", f)
		}
	}
	if len(s.Properties) != len(allFields)-len(unlisted) {
		t.Errorf("Schema has %d properties, Parse accepts %d of which %d unlisted", len(s.Properties), len(allFields), len(unlisted))
	}
}

// FuzzScanFields holds scanFields to json.Unmarshal into a map: whatever
// it reads is what the decoder reads, the last of a repeated key winning.
func FuzzScanFields(f *testing.F) {
	for _, s := range []string{
		`{"tool": "echo", "server": "a", "args": {"text": "hi"}}`,
		`{"tool": "a", "tool": "b"}`,
		`{"search": ["x", "y"], "limit": 2.0}`,
		`{"tool": "a", "other": 1}`,
		`{"to\u006fl": "x"}`,
		` { "include_disabled" : true } `,
		`[]`, `"x"`, `{`, `{"tool": "\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := scanFields(raw)
		if !ok {
			return
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("scanFields read %s, which the decoder refuses: %v", raw, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: scanFields %d fields, the decoder %d", raw, len(got), len(want))
		}
		for k, v := range want {
			if string(got[k]) != string(v) {
				t.Fatalf("%s: field %q is %s, the decoder's %s", raw, k, got[k], v)
			}
		}
	})
}

// FuzzFlatArgs holds flatArgs to the decoder parseArgs uses otherwise:
// whatever it decodes, the decoder decodes to the same value.
func FuzzFlatArgs(f *testing.F) {
	for _, s := range []string{
		`{"text": "hi", "n": 1.50, "big": 12345678901234567890, "ok": true, "no": false, "z": null}`,
		`{"a": "x", "a": "y"}`, `{"a": -0, "b": 1e400}`, `{"é": "x"}`, `{"a": "é"}`, `{"a": "\u0041"}`,
		`{"a": {"b": 1}}`, `{"a": [1]}`, `{}`, ` {"a":1} `, `{"a": 1`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := flatArgs(raw)
		if !ok {
			return
		}
		var want map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil || want == nil || dec.More() {
			t.Fatalf("flatArgs decoded %s, which the decoder refuses: %v", raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: flatArgs %#v, the decoder %#v", raw, got, want)
		}
	})
}
