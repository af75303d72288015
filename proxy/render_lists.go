package proxy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/bound"
)

// Resources is the answer of resources.list: a server's resources, each
// named by the reference of the same index in refs, and its templates.
func Resources(server string, res []*mcp.Resource, refs []string, tmpls []*mcp.ResourceTemplate, a Audience) *Result {
	r := &Result{Details: Details{Operation: string(ActionResourcesList), Server: server, Count: len(res) + len(tmpls)}}
	lines := []string{fmt.Sprintf("%s and %s on %q; read one with %s",
		plural(len(res), "resource", "resources"), plural(len(tmpls), "template", "templates"), server, a.ReadResource(server))}
	for i, rs := range res {
		info := ResourceInfo{Ref: refs[i], Name: rs.Name, Title: rs.Title, MIMEType: rs.MIMEType,
			Description: Headline(rs.Description, 120), URI: bound.RedactURI(rs.URI)}
		r.Details.Resources = append(r.Details.Resources, info)
		lines = append(lines, resourceLine(info))
	}
	for _, t := range tmpls {
		info := TemplateInfo{Name: t.Name, URITemplate: t.URITemplate, MIMEType: t.MIMEType, Description: Headline(t.Description, 120)}
		r.Details.Templates = append(r.Details.Templates, info)
		lines = append(lines, fmt.Sprintf("template %s  %s%s", info.URITemplate, info.Name, dashed(info.Description)))
	}
	if len(tmpls) > 0 {
		lines = append(lines, "a URI made from a template may be read "+a.ReadTemplate(server))
	}
	return r.lines("resources-"+server, lines)
}

func resourceLine(info ResourceInfo) string {
	line := info.Ref + "  " + info.Name
	if info.MIMEType != "" {
		line += " (" + info.MIMEType + ")"
	}
	return line + dashed(info.Description)
}

// ResourcePart is one content of a resource that was read: text, or a
// blob already written to a spill file.
type ResourcePart struct {
	URI      string
	MIMEType string
	Text     string
	Blob     *bound.Spill // the blob's spill file; nil for text
	Size     int          // of the blob, in bytes
}

// Read is the answer of resources.read of ref on server: text labelled as
// untrusted data, and blobs named by their spill files.
func Read(server, ref string, parts []ResourcePart) *Result {
	r := &Result{Details: Details{Operation: string(ActionResourcesRead), Server: server, Count: len(parts)}}
	var lines []string
	for _, c := range parts {
		source := fmt.Sprintf("resource %s on %q", bound.RedactURI(c.URI), server)
		if c.Blob != nil {
			r.Details.Spills = append(r.Details.Spills, *c.Blob)
			lines = append(lines, fmt.Sprintf("%s: %s, %d bytes, saved to %s", source, orUnknownType(c.MIMEType), c.Size, c.Blob.Path))
			continue
		}
		lines = append(lines, bound.Untrusted(source, c.Text))
	}
	if len(lines) == 0 {
		lines = append(lines, fmt.Sprintf("resource %s on %q is empty", ref, server))
	}
	return r.lines("resource-"+ref, lines)
}

func orUnknownType(m string) string {
	if m == "" {
		return "binary"
	}
	return m
}

// Prompts is the answer of prompts.list: a server's prompts with their
// arguments, required ones starred.
func Prompts(server string, ps []*mcp.Prompt, a Audience) *Result {
	r := &Result{Details: Details{Operation: string(ActionPromptsList), Server: server, Count: len(ps)}}
	lines := []string{fmt.Sprintf("%s on %q; get one with %s", plural(len(ps), "prompt", "prompts"), server, a.GetPrompt(server))}
	for _, p := range ps {
		info := PromptInfo{Name: p.Name, Title: p.Title, Description: Headline(p.Description, 120)}
		var args []string
		for _, a := range p.Arguments {
			info.Arguments = append(info.Arguments, PromptArg{Name: a.Name, Description: Headline(a.Description, 80), Required: a.Required})
			if a.Required {
				args = append(args, a.Name+"*")
			} else {
				args = append(args, a.Name)
			}
		}
		r.Details.Prompts = append(r.Details.Prompts, info)
		line := p.Name
		if len(args) > 0 {
			line += "(" + strings.Join(args, ", ") + ")"
		}
		lines = append(lines, line+dashed(info.Description))
	}
	if len(ps) > 0 {
		lines = append(lines, "* required")
	}
	return r.lines("prompts-"+server, lines)
}

// MaxPromptMessages bounds the messages of a prompt (DESIGN.md, Bounds).
const MaxPromptMessages = 100

// FindPrompt returns the prompt named name among a server's prompts, or an
// error that lists them.
func FindPrompt(server, name string, ps []*mcp.Prompt) (*mcp.Prompt, error) {
	var found *mcp.Prompt
	var names []string
	for _, p := range ps {
		if p.Name == name {
			found = p
		}
		names = append(names, p.Name)
	}
	if found != nil {
		return found, nil
	}
	return nil, fmt.Errorf("unknown prompt %q on %q; its prompts are: %s", name, server, strings.Join(names, ", "))
}

// PromptArgs checks arguments against a prompt's declaration before any
// request: every required one present, none unknown, each a string (numbers
// and booleans are taken as their JSON text).
func PromptArgs(p *mcp.Prompt, given map[string]any) (map[string]string, error) {
	declared := map[string]bool{}
	var missing []string
	for _, a := range p.Arguments {
		declared[a.Name] = true
		if _, ok := given[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	var unknown []string
	out := map[string]string{}
	for k, v := range given {
		if !declared[k] {
			unknown = append(unknown, k)
			continue
		}
		switch v := v.(type) {
		case string:
			out[k] = v
		case json.Number, bool, float64:
			out[k] = fmt.Sprint(v)
		default:
			return nil, fmt.Errorf("prompt %q: argument %q must be a string, not %T", p.Name, k, v)
		}
	}
	sort.Strings(missing)
	sort.Strings(unknown)
	var names []string
	for _, a := range p.Arguments {
		names = append(names, a.Name)
	}
	switch {
	case len(missing) > 0:
		return nil, fmt.Errorf("prompt %q needs %s (its arguments: %s); nothing was requested", p.Name, quoteJoin(missing), strings.Join(names, ", "))
	case len(unknown) > 0:
		return nil, fmt.Errorf("prompt %q has no argument %s (its arguments: %s); nothing was requested", p.Name, quoteJoin(unknown), orNone(names))
	}
	return out, nil
}

// PromptMessage is one message of a prompt, its content converted (binary
// content already in spill files).
type PromptMessage struct {
	Role    mcp.Role
	Content bound.Converted
}

// CheckPromptSize returns an error if a prompt has more than
// MaxPromptMessages messages.
func CheckPromptSize(server, name string, messages int) error {
	if messages > MaxPromptMessages {
		return fmt.Errorf("prompt %q on %q has %d messages, over the bound of %d", name, server, messages, MaxPromptMessages)
	}
	return nil
}

// Prompt is the answer of prompts.get: the prompt's messages, labelled as
// untrusted data.
func Prompt(server, name, description string, msgs []PromptMessage) *Result {
	r := &Result{Details: Details{Operation: string(ActionPromptsGet), Server: server, Count: len(msgs)}}
	var body []string
	if description != "" {
		body = append(body, "description: "+description)
	}
	for _, m := range msgs {
		r.Details.Spills = append(r.Details.Spills, m.Content.Spills...)
		r.Images = append(r.Images, m.Content.Images...)
		body = append(body, fmt.Sprintf("[%s]\n%s", m.Role, m.Content.Text))
	}
	lines := []string{fmt.Sprintf("prompt %q on %q: %s", name, server, plural(len(msgs), "message", "messages")),
		bound.Untrusted(fmt.Sprintf("prompt %q on %q", name, server), strings.Join(body, "\n"))}
	return r.lines("prompt-"+name, lines)
}
