package bound

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Visible is what a model may be shown of one result: text, images and
// structured content. An MCP client may show the structured content
// besides the text or instead of it, so the limits apply to the three
// together.
type Visible struct {
	Text       string
	Images     []*mcp.ImageContent
	Structured any     // nil for none
	Spills     []Spill // the files Text names
	// Blocks are the content blocks Text was made of (Converted.Blocks):
	// Fit keeps them in step with what it shows (see Fit).
	Blocks []Block

	// StructuredInText says the text holds the structured content, as
	// Convert's text does (the server's own JSON block, the same values,
	// or the JSON Convert adds): then, when the text is spilled, structured
	// content that does not fit is left out with a note naming the text's
	// file, and no file of its own is written: the result has one file,
	// not two copies.
	StructuredInText bool

	// StructuredBytes, if not zero, is what the structured content takes
	// where it is shown, for a caller that shows it inside JSON of its own
	// (nested, it is indented deeper); by default it takes its indented
	// JSON.
	StructuredBytes int
}

// Size returns what the limits count of a result: its bytes are those of
// the text, of the images' data and of the structured content as indented
// JSON (the longest form any face shows: `switchboard --json` prints it so;
// the MCP wire form is compact), and its lines are the text's.
func (v Visible) Size() (bytes, lines int, err error) {
	js, err := indentJSON(v.Structured)
	return len(v.Text) + imageBytes(v.Images) + v.structuredBytes(js), Lines(v.Text), err
}

func (v Visible) structuredBytes(js []byte) int {
	if v.StructuredBytes != 0 && js != nil {
		return v.StructuredBytes
	}
	return len(js)
}

// Fit bounds a result as a whole, leaving reserve bytes of the limit to
// what the caller adds (the mcp tool's details). A result within the limits
// is returned as it is. Otherwise each part keeps what is left by the ones
// before it, in the order a model needs them: the text (spilled to a
// preview, as Text does, when it does not fit on its own), then the images
// in order, then the structured content, which mostly repeats the text (the
// spec asks servers to put its JSON in a text block too). A preview takes
// the budget, less the room of the images and structured content when
// together they take at most half of it (else of the images alone, on the
// same terms). An image that does not fit is written to a spill file and
// named in a note after the text; so is structured content (as indented
// JSON), unless the text holds it (StructuredInText) and was spilled: then
// the note names the text's file, and the result has one spill file, not
// two copies.
//
// The result is then at most the limit, plus the notes naming spill files.
func (s *Spiller) Fit(what string, v Visible, reserve int) (Visible, error) {
	js, err := indentJSON(v.Structured)
	if err != nil {
		return Visible{}, fmt.Errorf("structured content of %s: %w", what, err)
	}
	sbytes := v.structuredBytes(js)
	if len(v.Text)+imageBytes(v.Images)+sbytes+reserve <= s.limits.MaxBytes && Lines(v.Text) <= s.limits.MaxLines {
		return v, nil
	}
	out := Visible{Spills: v.Spills}
	t, err := s.textWithin(what, v.Text, reserve, s.keep(v, sbytes, reserve))
	if err != nil {
		return Visible{}, err
	}
	out.Text = t.Text
	if t.Spill != nil {
		out.Spills = append(out.Spills, *t.Spill)
	}
	left := s.limits.MaxBytes - reserve - len(out.Text)
	if t.Spill != nil {
		left = s.limits.MaxBytes - reserve - t.shown // the note is outside the limit
	}
	var notes []string
	imageSpills := make([]string, len(v.Images))
	for i, img := range v.Images {
		if len(img.Data) <= left {
			out.Images = append(out.Images, img)
			left -= len(img.Data)
			continue
		}
		reason := fmt.Sprintf("image %d of %d bytes: with the rest of the result, over the limit of %d bytes", i+1, len(img.Data), s.limits.MaxBytes)
		sp, err := s.Blob(fmt.Sprintf("%s-image-%d", what, i+1), extension(img.MIMEType), img.Data, reason)
		if err != nil {
			return Visible{}, err
		}
		out.Spills = append(out.Spills, *sp)
		imageSpills[i] = sp.Path
		notes = append(notes, fmt.Sprintf("[not attached: %s; saved to %s]", reason, sp.Path))
	}
	switch {
	case js == nil:
	case sbytes <= left:
		out.Structured = v.Structured
	case v.StructuredInText && t.Spill != nil:
		notes = append(notes, fmt.Sprintf("[not shown: structured content of %d bytes (as indented JSON): with the rest of the result, over the limit of %d bytes; the whole text holds it, saved to %s]", len(js), s.limits.MaxBytes, t.Spill.Path))
	default:
		reason := fmt.Sprintf("structured content of %d bytes (as indented JSON): with the rest of the result, over the limit of %d bytes", len(js), s.limits.MaxBytes)
		sp, err := s.JSON(what+"-structured", v.Structured, reason)
		if err != nil {
			return Visible{}, err
		}
		out.Spills = append(out.Spills, *sp)
		notes = append(notes, fmt.Sprintf("[not shown: %s; saved to %s]", reason, sp.Path))
	}
	out.Text = withNotes(out.Text, notes)
	out.Blocks = fitBlocks(v.Blocks, out.Text, t.Spill, imageSpills)
	return out, nil
}

// fitBlocks keeps the blocks of a result in step with what Fit made of it:
// when the text was cut, the blocks of text are one, the text as shown,
// with the file that holds it whole; an image Fit spilled names its file
// instead of holding its data. imageSpills[i] is the file of the result's
// i-th attached image ("" if it stays), the i-th image block that holds
// its data.
func fitBlocks(blocks []Block, text string, textSpill *Spill, imageSpills []string) []Block {
	if blocks == nil {
		return nil
	}
	var bs []Block
	if textSpill != nil {
		bs = append(bs, Block{Type: "text", Text: text, Spill: textSpill.Path})
	}
	i := 0
	for _, b := range blocks {
		switch {
		case b.Type == "image" && b.Spill == "":
			if i < len(imageSpills) && imageSpills[i] != "" {
				b.Data, b.Spill = nil, imageSpills[i]
			}
			i++
		case textSpill != nil && b.Spill == "":
			continue // in the text's file
		}
		bs = append(bs, b)
	}
	return bs
}

// keep is the room a preview of v's text leaves to its images and
// structured content: theirs, when together they take at most half the
// budget, else the images', on the same terms, else none.
func (s *Spiller) keep(v Visible, sbytes, reserve int) int {
	half := (s.limits.MaxBytes - reserve) / 2
	switch imgs := imageBytes(v.Images); {
	case imgs+sbytes <= half:
		return imgs + sbytes
	case imgs <= half:
		return imgs
	}
	return 0
}

// withNotes puts notes on lines of their own after text.
func withNotes(text string, notes []string) string {
	if len(notes) == 0 {
		return text
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + strings.Join(notes, "\n")
}

// indentJSON returns v as JSON indented by two spaces, nil for nil.
func indentJSON(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return json.MarshalIndent(v, "", "  ")
}

func imageBytes(images []*mcp.ImageContent) int {
	n := 0
	for _, img := range images {
		n += len(img.Data)
	}
	return n
}

// Within reports whether a tool result, as it came, is within the limits:
// the bytes of its text, binary data and structured content (counted as
// Size counts them) and the lines of its text. Such a result can be passed
// on untouched.
func (l Limits) Within(contents []mcp.Content, structured any) bool {
	l = l.withDefaults()
	js, err := indentJSON(structured)
	if err != nil {
		return false
	}
	bytes, lines := len(js), 0
	for _, c := range contents {
		b, n := contentSize(c)
		bytes, lines = bytes+b, lines+n
		if bytes > l.MaxBytes || lines > l.MaxLines {
			return false
		}
	}
	return bytes <= l.MaxBytes
}

// WithinText is Within for a result of text only, given its bytes and
// lines.
func (l Limits) WithinText(bytes, lines int) bool {
	l = l.withDefaults()
	return bytes <= l.MaxBytes && lines <= l.MaxLines
}

// contentSize returns the bytes and lines a content block shows.
func contentSize(c mcp.Content) (bytes, lines int) {
	switch c := c.(type) {
	case *mcp.TextContent:
		return len(c.Text), Lines(c.Text)
	case *mcp.ImageContent:
		return len(c.Data), 0
	case *mcp.AudioContent:
		return len(c.Data), 0
	case *mcp.EmbeddedResource:
		if c.Resource == nil {
			return 0, 0
		}
		return len(c.Resource.URI) + len(c.Resource.Text) + len(c.Resource.Blob), Lines(c.Resource.Text)
	case nil:
		return 0, 0
	}
	js, _ := json.Marshal(c)
	return len(js), 1
}

// JSON writes v as indented JSON to a spill file and returns it.
func (s *Spiller) JSON(what string, v any, reason string) (*Spill, error) {
	js, err := indentJSON(v)
	if err != nil {
		return nil, fmt.Errorf("spilling %s: %w", what, err)
	}
	path, err := s.write(what, ".json", js)
	if err != nil {
		return nil, fmt.Errorf("spilling %s: %w", what, err)
	}
	return &Spill{Path: path, Bytes: len(js), Lines: Lines(string(js)), Reason: reason}, nil
}
