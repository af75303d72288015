package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func nest(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func TestDeeper(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want bool
	}{
		{`{}`, 1, false},
		{`{"a":[]}`, 1, true},
		{`{"a":"[[[[["}`, 1, false},
		{`{"a":"\"[[["}`, 1, false},
		{`{"a":` + nest(999) + `}`, 1000, false},
		{`{"a":` + nest(1000) + `}`, 1000, true},
		{nest(3000)[:1500], 1000, true}, // cut short
		{`not json at all`, 0, false},
	} {
		if got := Deeper([]byte(tc.in), tc.max); got != tc.want {
			t.Errorf("Deeper(%.40q, %d) = %v, want %v", tc.in, tc.max, got, tc.want)
		}
	}
}

func TestEnvelope(t *testing.T) {
	deep := nest(5000)
	for _, tc := range []struct {
		in   string
		id   string
		kind Kind
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"a":` + deep + `}}`, `7`, Request},
		// The TypeScript SDK writes the id last, after deep params.
		{`{"method":"tools/call","params":{"a":` + deep + `},"jsonrpc":"2.0","id":"x-1"}`, `"x-1"`, Request},
		{`{"result":{"a":` + deep + `},"jsonrpc":"2.0","id":3}`, `3`, Response},
		{`{"error":{"code":1},"id":-2}`, `-2`, Response},
		// An id inside params is not the message's.
		{`{"method":"m","params":{"id":9}}`, ``, Request},
		{`{"method":"m","params":[{"id":9}],"x":"\"id\":4"}`, ``, Request},
		// Ids JSON-RPC does not allow, and none.
		{`{"id":null,"method":"m"}`, ``, Request},
		{`{"id":{"a":1},"method":"m"}`, ``, Request},
		{`{"jsonrpc":"2.0"}`, ``, Unknown},
		// Repeated: the last, as decoders take it.
		{`{"id":1,"id":2,"method":"m"}`, `2`, Request},
		// Cut short, and not JSON after the id.
		{`{"jsonrpc":"2.0","id":12,"method":"m","params":{"a":[[[[`, `12`, Request},
		{`{"id":12`, ``, Unknown},
		{`{"id":"ab`, ``, Unknown},
		{`{"id":5,"method":"m","params":{,,,:::}`, `5`, Request},
		{`[{"id":1,"method":"m"}]`, ``, Unknown},
		{``, ``, Unknown},
		{`   `, ``, Unknown},
	} {
		id, kind := Envelope([]byte(tc.in))
		if string(id) != tc.id || kind != tc.kind {
			t.Errorf("Envelope(%.60q) = %s, %d; want %s, %d", tc.in, id, kind, tc.id, tc.kind)
		}
	}
}

func TestTailID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`...,"jsonrpc":"2.0","id":3}`, `3`},
		{`...,"id" : "a\"b" }` + "\n", `"a\"b"`},
		{`..."params":{"id":3}}`, ``},
		{`...,"id":3,"jsonrpc":"2.0"}`, ``},
	} {
		if got := TailID([]byte(tc.in)); string(got) != tc.want {
			t.Errorf("TailID(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// FuzzEnvelope holds Envelope and Deeper to what decoders make of valid
// messages: Envelope's id is the message's (when keys have no escapes,
// which could spell "id"), and Deeper agrees with go-sdk's decoder on
// nesting.
func FuzzEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{}}`,
		`{"method":"m","params":{"id":[1,{"id":2}]},"id":"z"}`,
		`{"result":{},"id":1e3}`,
		`{"id":1,"id":"2"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":` + nest(998) + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":` + nest(999) + `}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		id, _ := Envelope(msg)
		deeper := Deeper(msg, MaxDepth)
		if !json.Valid(msg) {
			return
		}
		if _, err := jsonrpc.DecodeMessage(msg); (err != nil && strings.Contains(err.Error(), "nesting depth")) != deeper {
			t.Fatalf("Deeper = %v, but go-sdk's decoder says %v", deeper, err)
		}
		var m map[string]json.RawMessage
		if bytes.IndexByte(msg, '\\') >= 0 || json.Unmarshal(msg, &m) != nil {
			return
		}
		want := m["id"]
		if len(want) > 0 && want[0] != '"' && want[0] != '-' && (want[0] < '0' || want[0] > '9') {
			want = nil
		}
		if !bytes.Equal(id, want) {
			t.Fatalf("Envelope's id = %s, want %s", id, want)
		}
	})
}
