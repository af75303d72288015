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
// pass through as they are, and the files that hold the rest.
type Converted struct {
	Text   string
	Images []*mcp.ImageContent
	Spills []Spill
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
		return c.Text, nil
	case *mcp.ImageContent:
		if len(c.Data) <= s.limits.MaxBytes {
			out.Images = append(out.Images, c)
			return fmt.Sprintf("[image %s, %d bytes, attached]", orUnknown(c.MIMEType), len(c.Data)), nil
		}
		return s.spillBinary(what, "image", c.MIMEType, c.Data, out)
	case *mcp.AudioContent:
		return s.spillBinary(what, "audio", c.MIMEType, c.Data, out)
	case *mcp.ResourceLink:
		return fmt.Sprintf("[resource link %q: %s%s]", c.Name, RedactURI(c.URI), mimeSuffix(c.MIMEType)), nil
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[empty embedded resource]", nil
		}
		if r.Blob != nil {
			return s.spillBinary(what, "resource "+RedactURI(r.URI), r.MIMEType, r.Blob, out)
		}
		return fmt.Sprintf("[resource %s%s]\n%s", RedactURI(r.URI), mimeSuffix(r.MIMEType), r.Text), nil
	case nil:
		return "", nil
	default:
		js, _ := json.Marshal(c)
		return fmt.Sprintf("[content of type %T]\n%s", c, js), nil
	}
}

func (s *Spiller) spillBinary(what, kind, mimeType string, data []byte, out *Converted) (string, error) {
	sp, err := s.Blob(what, extension(mimeType), data, kind+" content")
	if err != nil {
		return "", err
	}
	out.Spills = append(out.Spills, *sp)
	return fmt.Sprintf("[%s %s, %d bytes, saved to %s]", kind, orUnknown(mimeType), len(data), sp.Path), nil
}

// HoldsStructured reports whether a text block already holds the structured
// content as JSON, as the spec recommends servers do.
func HoldsStructured(contents []mcp.Content, structured any) bool {
	want, err := json.Marshal(structured)
	if err != nil {
		return false
	}
	for _, c := range contents {
		t, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		var v any
		if json.Unmarshal([]byte(t.Text), &v) != nil {
			continue
		}
		got, err := json.Marshal(v)
		if err == nil && bytes.Equal(got, want) {
			return true
		}
	}
	return false
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
