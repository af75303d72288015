package pinning

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// roundTrip is canonical as pins were hashed before it: a decoding into an
// any and an encoding. canonical must write the same bytes for every
// input, or pins stored before would no longer match.
func roundTrip(raw []byte) []byte {
	var v any
	if json.Unmarshal(raw, &v) == nil {
		raw, _ = json.Marshal(v)
	}
	return raw
}

// catalogTools are the tools of the search catalog in testdata: real
// schemas, in many languages.
func catalogTools(t testing.TB) []*mcp.Tool {
	t.Helper()
	f, err := os.Open("../catalog/testdata/catalog.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tools []*mcp.Tool
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var tool mcp.Tool
		if err := json.Unmarshal(sc.Bytes(), &tool); err != nil {
			t.Fatal(err)
		}
		tools = append(tools, &tool)
	}
	if err := sc.Err(); err != nil || len(tools) == 0 {
		t.Fatalf("read %d tools: %v", len(tools), err)
	}
	return tools
}

var canonicalSeeds = []string{
	`{}`, `[]`, `null`, `true`, `0`, `-0`, `1.5`, `1e21`, `1e20`, `123456789012345`, `1234567890123456789`,
	`1e-7`, `0.000001`, `-1.25e-10`, `1E400`, `[1e400]`, `"\u0041\/\u00e9"`, `"<a & b>"`, `"\u003c\u2028"`,
	`"\ud83d\ude00 \ud800 x"`, "\"\xff\xfe\"", "\"\u2028\"", `{"b":1,"a":2,"b":3}`, `{"a":{"z":[1,{"y":null,"x":"\n"}]}}`,
	` { "k" : [ 1 , 2 ] } `, `{"a":1}x`, `{"a":}`, `"\u001f\u007f\t"`, `"\u000A"`, `"\u001F"`,
	`{"\u0062":1,"b":2}`, `[[[[]]]]`, `{"":""}`, `-`, `01`, `1.`, `"` + "\x01" + `"`,
	`{"a":1e400,"a":1}`, `{"a":{"x":[1e999]},"a":2}`, `{"a":"1e999","a":2}`,
}

// FuzzCanonical holds canonical to roundTrip on any input.
func FuzzCanonical(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Add(deepUnsorted(3))
	tools := catalogTools(f)
	for _, tool := range tools[:min(40, len(tools))] {
		b, _ := json.Marshal(tool)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want := roundTrip(bytes.Clone(raw))
		if got := canonical(bytes.Clone(raw)); !bytes.Equal(got, want) {
			t.Fatalf("canonical(%q)\n got %q\nwant %q", raw, got, want)
		}
		// What json.Marshal writes is valid: Definition skips the check.
		if json.Valid(raw) {
			if got := canonicalValid(bytes.Clone(raw)); !bytes.Equal(got, want) {
				t.Fatalf("canonicalValid(%q)\n got %q\nwant %q", raw, got, want)
			}
		}
	})
}

// deepUnsorted is an object nested depth times, each level's keys out of
// order: what a hostile server could offer to make hashing its tool cost
// the square of its size.
// The nested object is under the last of two equal keys, the one a
// decoding keeps.
func deepUnsorted(depth int) []byte {
	var b bytes.Buffer
	for range depth {
		b.WriteString(`{"b":[1,"x",-0.5e-7],"a":"first","a":`)
	}
	b.WriteString(`0`)
	for range depth {
		b.WriteString(`}`)
	}
	return b.Bytes()
}

// TestCanonicalDeep: nesting as deep as a decoding allows.
func TestCanonicalDeep(t *testing.T) {
	for _, depth := range []int{1, 2, 100, 9999} {
		raw := deepUnsorted(depth)
		got, want := canonicalValid(raw), roundTrip(raw)
		if !bytes.Equal(got, want) {
			t.Errorf("depth %d: canonical differs from the round trip (%d and %d bytes)", depth, len(got), len(want))
		}
		if n := bytes.Count(want, []byte(`"b":[1,"x",-5e-8]`)); n != depth {
			t.Errorf("depth %d: the canonical form holds %d levels", depth, n)
		}
	}
}

// TestCanonicalCatalog: every tool of the catalog hashes as before.
func TestCanonicalCatalog(t *testing.T) {
	for _, tool := range catalogTools(t) {
		raw, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := canonical(raw), roundTrip(raw); !bytes.Equal(got, want) {
			t.Errorf("tool %q:\n got %s\nwant %s", tool.Name, got, want)
		}
	}
}

func BenchmarkDefinition(b *testing.B) {
	tools := catalogTools(b)
	b.Run("canonical", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			Definition(tools[i%len(tools)])
		}
	})
	b.Run("round-trip", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			raw, _ := json.Marshal(tools[i%len(tools)])
			roundTrip(raw)
		}
	})
}

func BenchmarkCanonicalParts(b *testing.B) {
	tools := catalogTools(b)
	raws := make([][]byte, len(tools))
	for i, t := range tools {
		raws[i], _ = json.Marshal(t)
	}
	b.Run("marshal", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			json.Marshal(tools[i%len(tools)])
		}
	})
	b.Run("valid", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			json.Valid(raws[i%len(raws)])
		}
	})
	b.Run("canonical", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			canonical(raws[i%len(raws)])
		}
	})
	b.Run("canonical-valid", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			canonicalValid(raws[i%len(raws)])
		}
	})
	b.Run("roundtrip", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			roundTrip(raws[i%len(raws)])
		}
	})
}

// BenchmarkCanonicalDeep: the time a level grows with the depth, not with
// the square of it.
func BenchmarkCanonicalDeep(b *testing.B) {
	for _, depth := range []int{1000, 4000} {
		raw := deepUnsorted(depth)
		b.Run(fmt.Sprint(depth), func(b *testing.B) {
			for b.Loop() {
				canonicalValid(raw)
			}
		})
	}
}
