package bound

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// shown is what a bounded result shows, less the notes that name its spill
// files: each note is a line, with its line break.
func shown(t *testing.T, v Visible) int {
	t.Helper()
	n, _, err := v.Size()
	if err != nil {
		t.Fatal(err)
	}
	return n - noteBytes(v.Text, v.Spills)
}

// noteBytes is what the lines of text that name a spill file take, each
// with one line break (as many as the text has).
func noteBytes(text string, spills []Spill) int {
	n, breaks := 0, strings.Count(text, "\n")
	for _, line := range strings.Split(text, "\n") {
		for _, sp := range spills {
			if strings.Contains(line, sp.Path) {
				n += len(line)
				if breaks > 0 {
					n, breaks = n+1, breaks-1
				}
				break
			}
		}
	}
	return n
}

func TestFitBoundary(t *testing.T) {
	const limit = 1024
	s := NewSpiller(t.TempDir(), Limits{MaxBytes: limit, MaxLines: 20})
	defer s.Close()
	structured := map[string]any{"s": strings.Repeat("y", 300)}
	js, _ := json.MarshalIndent(structured, "", "  ")
	const reserve = 100
	n := limit - reserve - len(js)

	at := Visible{Text: strings.Repeat("x", n), Structured: structured}
	got, err := s.Fit("at", at, reserve)
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != at.Text || got.Structured == nil || len(got.Spills) != 0 {
		t.Errorf("at the limit: text %d bytes, structured %v, spills %d; want it as it is", len(got.Text), got.Structured != nil, len(got.Spills))
	}

	over := Visible{Text: strings.Repeat("x", n+1), Structured: structured}
	got, err = s.Fit("over", over, reserve)
	if err != nil {
		t.Fatal(err)
	}
	if got.Structured != nil || len(got.Spills) != 1 || !strings.HasPrefix(got.Text, over.Text+"\n[not shown: structured content") {
		t.Fatalf("one byte over: structured %v, spills %v, text %.80q…; want the text whole and the structured content spilled", got.Structured != nil, got.Spills, got.Text)
	}
	if data, err := os.ReadFile(got.Spills[0].Path); err != nil || string(data) != string(js) {
		t.Errorf("structured spill holds %q (%v), want its indented JSON", data, err)
	}
	if n := shown(t, got) + reserve; n > limit {
		t.Errorf("one byte over: %d bytes shown with the reserve, over %d", n, limit)
	}
}

// TestFitOrder checks what gives way first: the structured content, then
// the last images, and the text is only cut when it does not fit alone.
func TestFitOrder(t *testing.T) {
	const limit = 2048
	s := NewSpiller(t.TempDir(), Limits{MaxBytes: limit, MaxLines: 40})
	defer s.Close()
	img := func(n int) *mcp.ImageContent {
		return &mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, n)}
	}
	big := map[string]any{"s": strings.Repeat("y", 1500)}
	small := map[string]any{"s": "y"}
	for _, tt := range []struct {
		name       string
		v          Visible
		images     int
		structured bool
		textCut    bool
	}{
		{"text and images keep, structured goes", Visible{Text: "hello", Images: []*mcp.ImageContent{img(600), img(600)}, Structured: big}, 2, false, false},
		{"the last image goes", Visible{Text: "hello", Images: []*mcp.ImageContent{img(1200), img(1200)}, Structured: small}, 1, true, false},
		{"a long text is cut, structured that fits stays", Visible{Text: strings.Repeat("x", 5000), Structured: small}, 0, true, true},
		{"too many lines", Visible{Text: strings.Repeat("x\n", 41)}, 0, false, true},
		{"a long text is cut and a large image goes", Visible{Text: strings.Repeat("x", 5000), Images: []*mcp.ImageContent{img(1800)}}, 0, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Fit("order", tt.v, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Images) != tt.images || (got.Structured != nil) != tt.structured {
				t.Errorf("images %d, structured %v; want %d, %v", len(got.Images), got.Structured != nil, tt.images, tt.structured)
			}
			if cut := !strings.HasPrefix(got.Text, tt.v.Text); cut != tt.textCut {
				t.Errorf("text cut: %v, want %v:\n%.200s", cut, tt.textCut, got.Text)
			}
			if n := shown(t, got); n > limit {
				t.Errorf("%d bytes shown besides the notes, over %d:\n%.300s", n, limit, got.Text)
			}
			for _, sp := range got.Spills {
				if !strings.Contains(got.Text, sp.Path) {
					t.Errorf("spill %s is not named in the text", sp.Path)
				}
			}
		})
	}
}

func TestWithin(t *testing.T) {
	l := Limits{MaxBytes: 100, MaxLines: 3}
	js, _ := json.MarshalIndent(map[string]any{"s": "y"}, "", "  ")
	text := func(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }
	for _, tt := range []struct {
		name       string
		contents   []mcp.Content
		structured any
		want       bool
	}{
		{"text at the limit", text(strings.Repeat("x", 100)), nil, true},
		{"text over", text(strings.Repeat("x", 101)), nil, false},
		{"lines over", text("a\nb\nc\nd"), nil, false},
		{"text and structured at the limit", text(strings.Repeat("x", 100-len(js))), map[string]any{"s": "y"}, true},
		{"text and structured over", text(strings.Repeat("x", 101-len(js))), map[string]any{"s": "y"}, false},
		{"audio counts", []mcp.Content{&mcp.TextContent{Text: "x"}, &mcp.AudioContent{Data: make([]byte, 100)}}, nil, false},
	} {
		if got := l.Within(tt.contents, tt.structured); got != tt.want {
			t.Errorf("%s: Within = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// FuzzFit checks the bound on any result: besides the notes that name its
// spill files, what Fit returns and the reserve are within the limits.
func FuzzFit(f *testing.F) {
	f.Add("hello", 10, 100, 0, 0)
	f.Add(strings.Repeat("x\n", 300), 2000, 700, 700, 300)
	f.Add(strings.Repeat("é", 2000), 0, 3000, 0, 500)
	const limit, lines = 1024, 20
	s := NewSpiller(f.TempDir(), Limits{MaxBytes: limit, MaxLines: lines})
	f.Cleanup(func() { s.Close() })
	f.Fuzz(func(t *testing.T, text string, structured, img1, img2, reserve int) {
		if structured < 0 || img1 < 0 || img2 < 0 || reserve < 0 || reserve > limit/2 ||
			structured > 1<<16 || img1 > 1<<16 || img2 > 1<<16 || strings.Contains(text, "/") {
			return
		}
		v := Visible{Text: text}
		if structured > 0 {
			v.Structured = map[string]any{"s": strings.Repeat("y", structured)}
		}
		for _, n := range []int{img1, img2} {
			if n > 0 {
				v.Images = append(v.Images, &mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, n)})
			}
		}
		got, err := s.Fit("fuzz", v, reserve)
		if err != nil {
			t.Fatal(err)
		}
		if n := shown(t, got); n+reserve > limit {
			t.Fatalf("%d bytes shown besides the notes, and %d reserved: over %d", n, reserve, limit)
		}
		notes := 0
		for _, line := range strings.Split(got.Text, "\n") {
			for _, sp := range got.Spills {
				if strings.Contains(line, sp.Path) {
					notes++
					break
				}
			}
		}
		if n := Lines(got.Text) - notes; n > lines {
			t.Fatalf("%d lines besides the notes: over %d", n, lines)
		}
	})
}
