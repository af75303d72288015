package bound

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestConvert(t *testing.T) {
	s := NewSpiller(t.TempDir(), Limits{MaxBytes: 1024, MaxLines: 100})
	defer s.Close()
	small := []byte("\x89PNG small")
	large := make([]byte, 4096)
	got, err := s.Convert("call", []mcp.Content{
		&mcp.TextContent{Text: "hello"},
		&mcp.ImageContent{Data: small, MIMEType: "image/png"},
		&mcp.ImageContent{Data: large, MIMEType: "image/png"},
		&mcp.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"},
		&mcp.ResourceLink{Name: "doc", URI: "https://user:pw@example.com/doc?token=abc"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: "body"}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b.bin", Blob: []byte{1, 2, 3}}},
	}, map[string]any{"sum": 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hello", "[image image/png, 10 bytes, attached]", "image image/png, 4096 bytes, saved to ", "audio audio/wav, 4 bytes, saved to ",
		`[resource link "doc": https://example.com/doc (credentials or query hidden)]`, "[resource file:///a.txt, text/plain]\nbody", "structured content:\n{\n  \"sum\": 3\n}"} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, got.Text)
		}
	}
	for _, leak := range []string{"pw", "token=abc"} {
		if strings.Contains(got.Text, leak) {
			t.Errorf("text shows %q:\n%s", leak, got.Text)
		}
	}
	if len(got.Images) != 1 || string(got.Images[0].Data) != string(small) {
		t.Errorf("images = %d, want the small one passed through", len(got.Images))
	}
	if len(got.Spills) != 3 {
		t.Fatalf("spills = %d, want 3 (large image, audio, blob)", len(got.Spills))
	}
	if data, err := os.ReadFile(got.Spills[0].Path); err != nil || len(data) != len(large) {
		t.Errorf("large image spill holds %d bytes (%v), want %d", len(data), err, len(large))
	}
}

func TestConvertDoesNotDuplicateStructured(t *testing.T) {
	s := NewSpiller(t.TempDir(), Limits{})
	defer s.Close()
	got, err := s.Convert("call", []mcp.Content{&mcp.TextContent{Text: `{"sum": 3}`}}, map[string]any{"sum": 3})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got.Text, "structured content") {
		t.Errorf("structured content repeated although a text block holds it:\n%s", got.Text)
	}
}

// TestHoldsStructured checks when the text already holds a result's
// structured content, so that it is shown once: its JSON, or every value.
func TestHoldsStructured(t *testing.T) {
	text := func(s ...string) []mcp.Content {
		var cs []mcp.Content
		for _, t := range s {
			cs = append(cs, &mcp.TextContent{Text: t})
		}
		return cs
	}
	many := map[string]any{}
	var manyText strings.Builder
	for i := range maxHeldValues + 1 {
		many[fmt.Sprint(i)] = fmt.Sprintf("v%03d", i)
		fmt.Fprintf(&manyText, "v%03d ", i)
	}
	for _, tt := range []struct {
		name       string
		contents   []mcp.Content
		structured any
		want       bool
	}{
		{"its JSON", text(`{"b": 2, "a": "x"}`), map[string]any{"a": "x", "b": 2}, true},
		{"a file server's", text("line 1\nline 2\n"), map[string]any{"content": "line 1\nline 2\n"}, true},
		{"every value, across blocks", text("Cloudy", "33 degrees, 82% humidity"), map[string]any{"conditions": "Cloudy", "temperature": 33, "humidity": 82}, true},
		{"a value missing", text("Cloudy, 33 degrees"), map[string]any{"conditions": "Cloudy", "temperature": 33, "humidity": 82}, false},
		{"no string: a number alone proves nothing", text("created 1 item"), map[string]any{"id": 1}, false},
		{"no text", nil, map[string]any{"content": ""}, false},
		{"too many values to look for", text(manyText.String()), many, false},
	} {
		if got := HoldsStructured(tt.contents, tt.structured); got != tt.want {
			t.Errorf("%s: HoldsStructured = %v, want %v", tt.name, got, tt.want)
		}
	}
}
