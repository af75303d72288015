package bound

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Converted is content made fit for a model: one text, the images that
// pass through as they are, and the files that hold the rest; and each
// block as it was converted, for a face that shows them one by one.
type Converted struct {
	Text   string
	Images []*mcp.ImageContent
	Spills []Spill
	Blocks []Block
}

// Block is one content block of a result as `switchboard call --json`
// prints it (docs/cli.md): its type as the protocol names it, and what it
// holds, or the file that holds it when it is not shown. Binary data that
// is shown is base64 in JSON, as on the wire.
type Block struct {
	Type     string `json:"type"` // text, image, audio, resource_link, resource, or another type's name
	Text     string `json:"text,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
	Data     []byte `json:"data,omitempty"`
	URI      string `json:"uri,omitempty"` // without credentials or query (see RedactURI)
	Name     string `json:"name,omitempty"`
	Bytes    int    `json:"bytes,omitempty"` // of binary data, shown or not
	Spill    string `json:"spill,omitempty"` // the file that holds the block whole
}

// Convert turns the content of a result into text. Text passes through;
// images within the byte limit pass through as images; other binary content
// (audio, blobs, large images) is written to spill files and named in the
// text; resource links are listed without credentials; structured content is
// added as JSON unless a text block already holds it. The text is not
// bounded here: the caller bounds the whole result, text, images and
// structured content together (see Fit).
func (s *Spiller) Convert(what string, contents []mcp.Content, structured any) (Converted, error) {
	var out Converted
	var parts []string
	for i, c := range contents {
		part, err := s.convertOne(what, i, c, &out)
		if err != nil {
			return Converted{}, err
		}
		parts = append(parts, part)
	}
	if structured != nil && !HoldsStructured(contents, structured) {
		js, err := indentJSON(structured)
		if err == nil {
			parts = append(parts, "structured content:\n"+string(js))
		}
	}
	out.Text = strings.Join(parts, "\n")
	return out, nil
}

func (s *Spiller) convertOne(what string, i int, c mcp.Content, out *Converted) (string, error) {
	switch c := c.(type) {
	case *mcp.TextContent:
		out.Blocks = append(out.Blocks, Block{Type: "text", Text: c.Text})
		return c.Text, nil
	case *mcp.ImageContent:
		if len(c.Data) <= s.limits.MaxBytes {
			out.Images = append(out.Images, c)
			out.Blocks = append(out.Blocks, Block{Type: "image", MIMEType: c.MIMEType, Data: c.Data, Bytes: len(c.Data)})
			return fmt.Sprintf("[image %s, %d bytes, attached]", orUnknown(c.MIMEType), len(c.Data)), nil
		}
		return s.spillBinary(what, Block{Type: "image", MIMEType: c.MIMEType}, "image", c.Data, out)
	case *mcp.AudioContent:
		return s.spillBinary(what, Block{Type: "audio", MIMEType: c.MIMEType}, "audio", c.Data, out)
	case *mcp.ResourceLink:
		out.Blocks = append(out.Blocks, Block{Type: "resource_link", Name: c.Name, URI: RedactURI(c.URI), MIMEType: c.MIMEType})
		return fmt.Sprintf("[resource link %q: %s%s]", c.Name, RedactURI(c.URI), mimeSuffix(c.MIMEType)), nil
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			out.Blocks = append(out.Blocks, Block{Type: "resource"})
			return "[empty embedded resource]", nil
		}
		b := Block{Type: "resource", URI: RedactURI(r.URI), MIMEType: r.MIMEType}
		if r.Blob != nil {
			return s.spillBinary(what, b, "resource "+b.URI, r.Blob, out)
		}
		b.Text = r.Text
		out.Blocks = append(out.Blocks, b)
		return fmt.Sprintf("[resource %s%s]\n%s", b.URI, mimeSuffix(r.MIMEType), r.Text), nil
	case nil:
		return "", nil
	default:
		js, _ := json.Marshal(c)
		text := fmt.Sprintf("[content of type %T]\n%s", c, js)
		out.Blocks = append(out.Blocks, Block{Type: fmt.Sprintf("%T", c), Text: string(js)})
		return text, nil
	}
}

// spillBinary writes binary content to a spill file; b is its block, to
// which it adds the file.
func (s *Spiller) spillBinary(what string, b Block, kind string, data []byte, out *Converted) (string, error) {
	sp, err := s.Blob(what, extension(b.MIMEType), data, kind+" content")
	if err != nil {
		return "", err
	}
	out.Spills = append(out.Spills, *sp)
	b.Bytes, b.Spill = len(data), sp.Path
	out.Blocks = append(out.Blocks, b)
	return fmt.Sprintf("[%s %s, %d bytes, saved to %s]", kind, orUnknown(b.MIMEType), len(data), sp.Path), nil
}

// HoldsStructured reports whether the text blocks already hold the
// structured content: one of them is its JSON, as the spec recommends
// servers do, or together they hold each of its values (every string, and
// every number and boolean as JSON writes it, with at least one string),
// as a file server's {"content": TEXT} beside TEXT does. Its keys are not
// looked for. Structured content of more than maxHeldValues values is held
// only as JSON.
func HoldsStructured(contents []mcp.Content, structured any) bool {
	want, err := json.Marshal(structured)
	if err != nil {
		return false
	}
	var texts []string
	for _, c := range contents {
		t, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		texts = append(texts, t.Text)
		var v any
		if json.Unmarshal([]byte(t.Text), &v) != nil {
			continue
		}
		got, err := json.Marshal(v)
		if err == nil && bytes.Equal(got, want) {
			return true
		}
	}
	return holdsValues(strings.Join(texts, "\n"), want)
}

// maxHeldValues bounds the values HoldsStructured looks for in the text,
// each a search of the whole text.
const maxHeldValues = 100

// holdsValues reports whether text holds every value of the JSON js, with
// at least one string among them (see HoldsStructured).
func holdsValues(text string, js []byte) bool {
	if text == "" {
		return false
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return false
	}
	var values []string
	strs := 0
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for _, e := range v {
				if !walk(e) {
					return false
				}
			}
		case []any:
			for _, e := range v {
				if !walk(e) {
					return false
				}
			}
		case string:
			strs++
			values = append(values, v)
		case json.Number:
			values = append(values, v.String())
		case bool:
			values = append(values, fmt.Sprint(v))
		}
		return len(values) <= maxHeldValues
	}
	if !walk(v) || strs == 0 {
		return false
	}
	for _, s := range values {
		if !strings.Contains(text, s) {
			return false
		}
	}
	return true
}

// RedactURI drops the user info, query and fragment of a URI, which often
// carry credentials.
func RedactURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		if i := strings.IndexAny(uri, "?#"); i >= 0 {
			return uri[:i] + "?…"
		}
		return uri
	}
	redacted := false
	if u.User != nil {
		u.User, redacted = nil, true
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment, redacted = "", false, "", "", true
	}
	s := u.String()
	if redacted {
		s += " (credentials or query hidden)"
	}
	return s
}

func extension(mimeType string) string {
	if exts, err := mime.ExtensionsByType(mimeType); err == nil && len(exts) > 0 {
		return exts[0]
	}
	return ".bin"
}

func mimeSuffix(m string) string {
	if m == "" {
		return ""
	}
	return ", " + m
}

func orUnknown(s string) string {
	if s == "" {
		return "of unknown type"
	}
	return s
}
