package front

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// In proxy mode the servers' prompts are offered to the client under the
// names direct tools get (server_prompt with the default toolPrefix), so a
// host can show them as commands for its user. A prompt costs the model
// nothing until the user picks one. They come from what the catalog knows,
// without starting a server; a server indexed later adds its prompts, and
// go-sdk tells the client (notifications/prompts/list_changed).

// offeredPrompt is one server's prompt as the client sees it.
type offeredPrompt struct {
	server, name string
	def          *mcp.Prompt // as registered, for syncPrompts
}

// syncPrompts makes the prompts offered match the usable servers and what
// the catalog knows of them. Two servers' prompts that would share a name
// (toolPrefix "none") are both offered as server_prompt instead.
func (s *Server) syncPrompts(ctx context.Context) {
	want := map[string]offeredPrompt{}
	taken := map[string]int{}
	var all []offeredPrompt
	for _, name := range s.eng.Usable() {
		ent, ok := s.eng.Cached(ctx, name)
		if !ok {
			continue
		}
		for _, p := range ent.Prompts {
			all = append(all, offeredPrompt{server: name, name: p.Name, def: p})
			taken[s.exposedName(name, p.Name)]++
		}
	}
	for _, p := range all {
		exposed := s.exposedName(p.server, p.name)
		if taken[exposed] > 1 {
			exposed = p.server + "_" + p.name
		}
		cp := *p.def
		cp.Name = exposed
		p.def = &cp
		want[exposed] = p
	}

	s.mu.Lock()
	var remove, add []string
	for name := range s.prompts {
		if _, ok := want[name]; !ok {
			remove = append(remove, name)
		}
	}
	for name, p := range want {
		if old, ok := s.prompts[name]; !ok || !reflect.DeepEqual(old.def, p.def) {
			add = append(add, name)
		}
	}
	s.prompts = want
	s.mu.Unlock()
	if len(remove) > 0 {
		s.mcp.RemovePrompts(remove...)
	}
	slices.Sort(add)
	for _, name := range add {
		s.mcp.AddPrompt(want[name].def, s.getOffered)
	}
}

// getOffered gets an offered prompt from its server, which starts it if
// it is not running.
func (s *Server) getOffered(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	s.mu.Lock()
	p, ok := s.prompts[req.Params.Name]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("prompt %q is no longer offered: list the prompts again", req.Params.Name)
	}
	return s.eng.GetPrompt(ctx, p.server, p.name, req.Params.Arguments)
}
