package front

import (
	"fmt"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a server asks of a person, through the gateway, names the server,
// so that a form shown while the user waits on one server cannot pass for
// another's (docs/serve.md, "Requests from servers"). The label comes
// first, where a server's own text cannot come before it, and the name
// is also in _meta under metaServer for clients that show it their way.

// metaServer is the _meta key that names the server a request comes from.
const metaServer = "io.switchboard/server"

// label is the words that start what a person is shown.
func label(server string) string { return fmt.Sprintf("[server %q asks] ", server) }

// labelElicit returns a copy of an elicitation whose message names server.
func labelElicit(server string, p *mcp.ElicitParams) *mcp.ElicitParams {
	if p == nil {
		p = &mcp.ElicitParams{}
	}
	cp := *p
	cp.Message = label(server) + p.Message
	cp.Meta = withMeta(p.Meta, server)
	return &cp
}

// labelSampling returns a copy of a sampling request that names server in
// the system prompt and at the start of its first text, which are what
// clients show the person asked to approve it (the model reads them too,
// and learns which server asks).
func labelSampling(server string, p *mcp.CreateMessageParams) *mcp.CreateMessageParams {
	if p == nil {
		p = &mcp.CreateMessageParams{}
	}
	cp := *p
	cp.Meta = withMeta(p.Meta, server)
	note := fmt.Sprintf("This request comes from the MCP server %q, through Switchboard.", server)
	if p.SystemPrompt != "" {
		note += "\n\n" + p.SystemPrompt
	}
	cp.SystemPrompt = note
	cp.Messages = make([]*mcp.SamplingMessage, len(p.Messages))
	copy(cp.Messages, p.Messages)
	for i, m := range cp.Messages {
		if m == nil {
			continue
		}
		if t, ok := m.Content.(*mcp.TextContent); ok {
			tc := *t
			tc.Text = label(server) + t.Text
			mc := *m
			mc.Content = &tc
			cp.Messages[i] = &mc
			break
		}
	}
	return &cp
}

// withMeta returns a copy of m that names server.
func withMeta(m mcp.Meta, server string) mcp.Meta {
	out := make(mcp.Meta, len(m)+1)
	maps.Copy(out, m)
	out[metaServer] = server
	return out
}
