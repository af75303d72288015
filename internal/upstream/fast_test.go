package upstream

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/bound"
)

var plainSeeds = []string{
	`{"content":[{"type":"text","text":"hi"}]}`,
	`{"content":[{"type":"text","text":"a\nb"},{"text":"é \u00e9","type":"text"}],"isError":true}`,
	`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"content":[],"resultType":"complete"}`,
	`{"content":[{"type":"text","text":"x"}],"_meta":{"n":1}}`,
	`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
	`{"content":[{"type":"text","text":"x","annotations":{"priority":1}}]}`,
	`{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}}`,
	`{"content":[{"type":"text","text":"x"}],"resultType":"input_required"}`,
	`{"content":[{"type":"text","text":"x"}],"isError":false,"isError":true}`,
	`{"content":[{"type":"text","text":"x"}],"extra":1}`,
	`{"isError":false}`,
	`{"content":[{"type":"text","text":"\ud800"}]}`,
	`{"content":[{"type":"text","text":"\ud83d\ude00 \\u0041"}]}`,
	`{"content":[{"type":"text","text":"\ude00\ud83d"}]}`,
}

// FuzzPlainResult checks plainResult against go-sdk: a result it calls
// plain is one go-sdk's client decodes and its server encodes again to the
// same JSON value, and its text's size is what bound counts.
func FuzzPlainResult(f *testing.F) {
	for _, s := range plainSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, result []byte) {
		r, ok := plainResult(result)
		if !ok {
			return
		}
		var res mcp.CallToolResult
		if err := json.Unmarshal(result, &res); err != nil {
			t.Fatalf("plain %s, which go-sdk refuses: %v", result, err)
		}
		again, err := json.Marshal(&res)
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		if err := json.Unmarshal(result, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(again, &b); err != nil {
			t.Fatal(err)
		}
		// go-sdk leaves out isError false and turns absent content into [].
		if m, ok := a.(map[string]any); ok && m["isError"] == false {
			delete(m, "isError")
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("plain %s, which go-sdk passes on as %s", result, again)
		}
		n, lines := 0, 0
		for _, c := range res.Content {
			tc := c.(*mcp.TextContent)
			n, lines = n+len(tc.Text), lines+bound.Lines(tc.Text)
		}
		if r.TextBytes != n || r.TextLines != lines || r.IsError != res.IsError {
			t.Fatalf("%s: %d bytes, %d lines, error %v; go-sdk: %d, %d, %v", result, r.TextBytes, r.TextLines, r.IsError, n, lines, res.IsError)
		}
	})
}

// TestPlainResult pins which seeds are plain.
func TestPlainResult(t *testing.T) {
	plain := map[int]bool{0: true, 1: true, 2: true, 12: true}
	for i, s := range plainSeeds {
		if _, ok := plainResult([]byte(s)); ok != plain[i] {
			t.Errorf("plainResult(%s) = %v, want %v", s, ok, plain[i])
		}
	}
}

// FuzzRawDecode checks RawResult.Decode against go-sdk's decoding
// (DecodeResult): for every plain result, the same result, field by field
// and as JSON.
func FuzzRawDecode(f *testing.F) {
	for _, s := range append(plainSeeds,
		`{"content":[]}`,
		`{"content":[{"type":"text","text":""}],"isError":false}`,
		`{"_meta":{"a":"b","c":[true,null,{"d":"e"}]},"content":[{"type":"text","text":"resultType"}]}`,
	) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, result []byte) {
		r, ok := plainResult(result)
		if !ok {
			return
		}
		mine, err := r.Decode()
		if err != nil {
			t.Fatalf("%s: %v", result, err)
		}
		theirs, err := DecodeResult(result)
		if err != nil {
			t.Fatalf("%s: go-sdk: %v", result, err)
		}
		if !reflect.DeepEqual(mine, theirs) {
			t.Fatalf("%s: decoded %#v, go-sdk %#v", result, mine, theirs)
		}
		a, _ := json.Marshal(mine)
		b, _ := json.Marshal(theirs)
		if string(a) != string(b) {
			t.Fatalf("%s: encodes to %s, go-sdk's to %s", result, a, b)
		}
	})
}
