package front

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mirrored is what transparent mode has registered, to remove what the
// server no longer offers.
type mirrored struct {
	tools, resources, templates, prompts map[string]bool
}

// mirror registers the single server's tools, resources, templates and
// prompts under their own names, and removes those it no longer has. With
// connect it connects the server when needed; without, it mirrors what the
// catalog has, if anything.
func (s *Server) mirror(ctx context.Context, connect bool) error {
	ent, ok := s.eng.Cached(ctx, s.single)
	if connect {
		var err error
		if ent, err = s.eng.Entry(ctx, s.single); err != nil {
			return err
		}
	} else if !ok {
		return nil
	}
	s.mu.Lock()
	old := s.mirrored
	s.mirrored = mirrored{tools: map[string]bool{}, resources: map[string]bool{}, templates: map[string]bool{}, prompts: map[string]bool{}}
	cur := s.mirrored
	s.mu.Unlock()

	plain := map[string]bool{}
	for _, t := range ent.Tools {
		cur.tools[t.Name] = true
		s.addDirect(t.Name, directTool{server: s.single, name: t.Name}, t)
		// go-sdk's client checks a result against the tool's output
		// schema; the fast lane would not.
		plain[t.Name] = t.OutputSchema == nil
	}
	s.mu.Lock()
	s.plain = plain
	s.mu.Unlock()
	for _, r := range ent.Resources {
		cur.resources[r.URI] = true
		s.mcp.AddResource(r, s.readResource)
	}
	for _, t := range ent.ResourceTemplates {
		cur.templates[t.URITemplate] = true
		s.mcp.AddResourceTemplate(t, s.readResource)
	}
	for _, p := range ent.Prompts {
		cur.prompts[p.Name] = true
		s.mcp.AddPrompt(p, s.getPrompt)
	}
	s.mcp.RemoveTools(gone(old.tools, cur.tools)...)
	s.mcp.RemoveResources(gone(old.resources, cur.resources)...)
	s.mcp.RemoveResourceTemplates(gone(old.templates, cur.templates)...)
	s.mcp.RemovePrompts(gone(old.prompts, cur.prompts)...)
	return nil
}

func gone(old, cur map[string]bool) []string {
	var out []string
	for k := range old {
		if !cur[k] {
			out = append(out, k)
		}
	}
	return out
}

func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return s.eng.ReadResource(ctx, s.single, req.Params.URI)
}

func (s *Server) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return s.eng.GetPrompt(ctx, s.single, req.Params.Name, req.Params.Arguments)
}
