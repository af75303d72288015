package switchboard

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/bound"
	"github.com/switchboard-mcp/switchboard/proxy"
)

// Prompt bounds: DESIGN.md (Bounds).
const maxPromptMessages = 100

// prompts lists a server's prompts with their arguments.
func (s *Session) prompts(ctx context.Context, server string) *Result {
	ps, err := s.e.pool.Prompts(ctx, server)
	if err != nil {
		return s.errorResult(proxy.ActionPromptsList, server, err)
	}
	r := &Result{Details: Details{Operation: string(proxy.ActionPromptsList), Server: server, Count: len(ps)}}
	lines := []string{fmt.Sprintf("%s on %q; get one with %s", plural(len(ps), "prompt", "prompts"), server, s.e.opts.Audience.GetPrompt(server))}
	for _, p := range ps {
		info := PromptInfo{Name: p.Name, Title: p.Title, Description: headline(p.Description, 120)}
		var args []string
		for _, a := range p.Arguments {
			info.Arguments = append(info.Arguments, PromptArg{Name: a.Name, Description: headline(a.Description, 80), Required: a.Required})
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
	return s.bounded(r, "prompts-"+server, lines)
}

// getPrompt validates the arguments against the prompt's declaration, then
// gets it; the messages are labelled as untrusted data.
func (s *Session) getPrompt(ctx context.Context, req *proxy.Request) *Result {
	ps, err := s.e.pool.Prompts(ctx, req.Server)
	if err != nil {
		return s.errorResult(proxy.ActionPromptsGet, req.Server, err)
	}
	var p *mcp.Prompt
	for _, c := range ps {
		if c.Name == req.Prompt {
			p = c
		}
	}
	if p == nil {
		var names []string
		for _, c := range ps {
			names = append(names, c.Name)
		}
		return s.errorResult(proxy.ActionPromptsGet, req.Server, fmt.Errorf("unknown prompt %q on %q; its prompts are: %s", req.Prompt, req.Server, strings.Join(names, ", ")))
	}
	args, err := promptArgs(p, req.Args)
	if err != nil {
		return s.errorResult(proxy.ActionPromptsGet, req.Server, err)
	}
	res, err := s.e.pool.GetPrompt(ctx, req.Server, p.Name, args)
	if err != nil {
		return s.errorResult(proxy.ActionPromptsGet, req.Server, err)
	}
	if len(res.Messages) > maxPromptMessages {
		return s.errorResult(proxy.ActionPromptsGet, req.Server, fmt.Errorf("prompt %q on %q has %d messages, over the bound of %d", p.Name, req.Server, len(res.Messages), maxPromptMessages))
	}
	r := &Result{Details: Details{Operation: string(proxy.ActionPromptsGet), Server: req.Server, Count: len(res.Messages)}}
	var body []string
	if res.Description != "" {
		body = append(body, "description: "+res.Description)
	}
	for i, m := range res.Messages {
		conv, err := s.e.spill.Convert(fmt.Sprintf("prompt-%s-%d", p.Name, i), []mcp.Content{m.Content}, nil)
		if err != nil {
			return s.errorResult(proxy.ActionPromptsGet, req.Server, err)
		}
		r.Details.Spills = append(r.Details.Spills, conv.Spills...)
		r.Images = append(r.Images, conv.Images...)
		body = append(body, fmt.Sprintf("[%s]\n%s", m.Role, conv.Text))
	}
	lines := []string{fmt.Sprintf("prompt %q on %q: %s", p.Name, req.Server, plural(len(res.Messages), "message", "messages")),
		bound.Untrusted(fmt.Sprintf("prompt %q on %q", p.Name, req.Server), strings.Join(body, "\n"))}
	return s.bounded(r, "prompt-"+p.Name, lines)
}

// promptArgs checks arguments against a prompt's declaration before any
// request: every required one present, none unknown, each a string (numbers
// and booleans are taken as their JSON text).
func promptArgs(p *mcp.Prompt, given map[string]any) (map[string]string, error) {
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
		return nil, fmt.Errorf("prompt %q needs %s (its arguments: %s); nothing was requested", p.Name, quoteList(missing), strings.Join(names, ", "))
	case len(unknown) > 0:
		return nil, fmt.Errorf("prompt %q has no argument %s (its arguments: %s); nothing was requested", p.Name, quoteList(unknown), orNone(names))
	}
	return out, nil
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}
