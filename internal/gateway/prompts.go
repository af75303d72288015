package gateway

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/proxy"
)

// prompts lists a server's prompts with their arguments.
func (s *Session) prompts(ctx context.Context, server string) *proxy.Result {
	ps, err := s.e.pool.Prompts(ctx, server)
	if err != nil {
		return proxy.ErrorResult(proxy.ActionPromptsList, server, err)
	}
	return proxy.Prompts(server, ps, s.e.opts.Audience)
}

// getPrompt validates the arguments against the prompt's declaration, then
// gets it; the messages are labelled as untrusted data.
func (s *Session) getPrompt(ctx context.Context, req *proxy.Request) *proxy.Result {
	res, p, err := s.fetchPrompt(ctx, req)
	if err != nil {
		return proxy.ErrorResult(proxy.ActionPromptsGet, req.Server, err)
	}
	msgs := make([]proxy.PromptMessage, len(res.Messages))
	for i, m := range res.Messages {
		conv, err := s.e.spill.Convert(fmt.Sprintf("prompt-%s-%d", p.Name, i), []mcp.Content{m.Content}, nil)
		if err != nil {
			return proxy.ErrorResult(proxy.ActionPromptsGet, req.Server, err)
		}
		msgs[i] = proxy.PromptMessage{Role: m.Role, Content: conv}
	}
	return proxy.Prompt(req.Server, p.Name, res.Description, msgs)
}

// fetchPrompt finds the prompt a request names, checks its arguments and
// gets it, within the bound of its messages.
func (s *Session) fetchPrompt(ctx context.Context, req *proxy.Request) (*mcp.GetPromptResult, *mcp.Prompt, error) {
	ps, err := s.e.pool.Prompts(ctx, req.Server)
	if err != nil {
		return nil, nil, err
	}
	p, err := proxy.FindPrompt(req.Server, req.Prompt, ps)
	if err != nil {
		return nil, nil, err
	}
	args, err := proxy.PromptArgs(p, req.Args)
	if err != nil {
		return nil, nil, err
	}
	res, err := s.e.pool.GetPrompt(ctx, req.Server, p.Name, args)
	if err != nil {
		return nil, nil, err
	}
	if err := proxy.CheckPromptSize(req.Server, p.Name, len(res.Messages)); err != nil {
		return nil, nil, err
	}
	return res, p, nil
}
