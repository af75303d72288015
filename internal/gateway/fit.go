package gateway

import (
	"encoding/json"
	"fmt"

	"github.com/switchboard-mcp/switchboard/bound"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// fit bounds a result as a whole (DESIGN.md, Bounds): its text, its images
// and its details together, since the mcp tool returns the details as
// structured content (a client may show them to the model) and --json
// prints them. Every result of Do passes here.
//
// A result within settings.output is returned as it is. Otherwise the
// details' listings, which repeat the text, go first: the details are
// written whole to a JSON spill file and only their summary stays (what
// the operation was, counts, the error, the spill files). Then bound.Fit
// shares what is left between the text, the images and a tool's structured
// content, in that order, spilling what does not fit, once: structured
// content that does not fit is in the text's file. The result is then
// within the limits, plus the notes (in the text, and as details.spills)
// that name the spill files.
func (s *Session) fit(r *proxy.Result) *proxy.Result {
	lim := s.e.spill.Limits()
	d := r.Details
	// Only a call's result has structured content, and its text holds it
	// (bound.Convert makes it so): the text's spill file is its one file.
	v := bound.Visible{Text: r.Text, Images: r.Images, Structured: d.Structured, StructuredInText: true, Blocks: r.Content}
	d.Structured = nil
	rest := detailsSize(d)
	if v.Structured != nil {
		if sb := detailsSize(r.Details) - rest; sb > 0 {
			// Nested in the details, it is indented deeper than on its own.
			v.StructuredBytes = sb
		}
	}
	size, lines, err := v.Size()
	if err != nil {
		return s.failed(r, err)
	}
	if size+rest <= lim.MaxBytes && lines <= lim.MaxLines {
		return r
	}
	var notes []string
	if sum, bulky := d.Summary(min(proxy.MaxDetailsError, lim.MaxBytes/16)); bulky && size+rest > lim.MaxBytes {
		reason := fmt.Sprintf("details of %d bytes (as indented JSON): with the rest of the result, over the limit of %d bytes", rest, lim.MaxBytes)
		sp, err := s.e.spill.JSON(r.SpillName+"-details", d, reason)
		if err != nil {
			return s.failed(r, err)
		}
		sum.Spills = append(sum.Spills, *sp)
		notes = append(notes, fmt.Sprintf("[structured details not shown: %s; saved to %s]", reason, sp.Path))
		d, rest = sum, detailsSize(sum)
	}
	v, err = s.e.spill.Fit(r.SpillName, v, rest)
	if err != nil {
		return s.failed(r, err)
	}
	r.Text, r.Images, r.Content = withNotes(v.Text, notes), v.Images, v.Blocks
	d.Structured = v.Structured
	d.Spills = append(d.Spills, v.Spills...)
	r.Details = d
	return r
}

// detailsSize is what the details count against the limits: the bytes of
// their indented JSON, as --json prints it, less the spill files, which
// are notes.
func detailsSize(d proxy.Details) int {
	d.Spills = nil
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return 0 // the details are our own types: they always marshal
	}
	return len(b)
}

// failed replaces a result that could not be bounded (a spill file could
// not be written) by an error result that needs no spill file.
func (s *Session) failed(r *proxy.Result, err error) *proxy.Result {
	return proxy.Unbounded(r, err, s.e.spill.Limits())
}

// withNotes puts notes on lines of their own after text.
func withNotes(text string, notes []string) string {
	for _, n := range notes {
		if text != "" {
			text += "\n"
		}
		text += n
	}
	return text
}
