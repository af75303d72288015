package switchboard

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/switchboard-mcp/switchboard/bound"
)

// A Section is a server's resource read once for a host's system prompt
// (terret-mcp's resource sections): a README, a style guide, a schema the
// agent should know from the start. Its Text is the resource's text,
// labelled as untrusted data from its server, at most MaxSectionBytes.
type Section struct {
	Server   string
	URI      string
	Priority int // lower first
	Text     string
}

// MaxSectionBytes bounds a section's text: a prompt section is read into
// every turn's context.
const MaxSectionBytes = 64 << 10

// sections are the engine's prompt sections.
type sections struct {
	mu   sync.Mutex
	list []Section
}

// AddSection reads a server's resource once and keeps its text as a
// prompt section, in place of one of the same server and URI. Binary
// contents are named, not included; text over MaxSectionBytes is cut, and
// the section says so.
func (e *Engine) AddSection(ctx context.Context, server, uri string, priority int) (Section, error) {
	res, err := e.core.ReadResource(ctx, server, uri)
	if err != nil {
		return Section{}, fmt.Errorf("reading %q of %q for a prompt section: %w", uri, server, err)
	}
	var b strings.Builder
	for _, c := range res.Contents {
		switch {
		case c.Text != "":
			b.WriteString(c.Text)
			if !strings.HasSuffix(c.Text, "\n") {
				b.WriteString("\n")
			}
		case len(c.Blob) > 0:
			fmt.Fprintf(&b, "[binary content %s, %d bytes, not included]\n", c.MIMEType, len(c.Blob))
		}
	}
	text := b.String()
	if len(text) > MaxSectionBytes {
		cut := MaxSectionBytes
		for cut > 0 && !utf8Start(text[cut]) {
			cut--
		}
		text = text[:cut] + fmt.Sprintf("\n[cut: %d bytes of %d shown]\n", cut, len(b.String()))
	}
	sec := Section{Server: server, URI: uri, Priority: priority,
		Text: bound.Untrusted(fmt.Sprintf("resource %q on %q", uri, server), text)}
	e.sections.mu.Lock()
	defer e.sections.mu.Unlock()
	e.sections.list = slices.DeleteFunc(e.sections.list, func(s Section) bool { return s.Server == server && s.URI == uri })
	e.sections.list = append(e.sections.list, sec)
	return sec, nil
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// Sections returns the prompt sections, by priority, then server and URI.
func (e *Engine) Sections() []Section {
	e.sections.mu.Lock()
	out := slices.Clone(e.sections.list)
	e.sections.mu.Unlock()
	slices.SortStableFunc(out, func(a, b Section) int {
		if a.Priority != b.Priority {
			return a.Priority - b.Priority
		}
		if c := strings.Compare(a.Server, b.Server); c != 0 {
			return c
		}
		return strings.Compare(a.URI, b.URI)
	})
	return out
}

// RemoveSections removes a server's prompt sections (all of them, as
// unmounting a server in terret-mcp does), or, with uris, those only, and
// returns how many it removed.
func (e *Engine) RemoveSections(server string, uris ...string) int {
	e.sections.mu.Lock()
	defer e.sections.mu.Unlock()
	n := len(e.sections.list)
	e.sections.list = slices.DeleteFunc(e.sections.list, func(s Section) bool {
		return s.Server == server && (len(uris) == 0 || slices.Contains(uris, s.URI))
	})
	return n - len(e.sections.list)
}
