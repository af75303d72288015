package gateway

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool that declares an output schema promises structured content that
// conforms to it (MCP 2025-06-18, "Output Schema"). Switchboard holds a
// server to that promise on every path a call takes (the mcp tool, direct
// tools, transparent mode, the CLI, the library): a result that breaks it
// is not passed on as a success, since a client that trusts the schema
// would act on data of another shape. go-sdk's client does not check it.
// Schemas are read as draft 2020-12, or draft-07 where their $schema says
// so.

// outputSchemas caches each output schema resolved, by its JSON: a server
// lists its tools once, and resolving a schema costs more than a check.
type outputSchemas struct {
	mu sync.Mutex
	m  map[string]*resolvedSchema
}

type resolvedSchema struct {
	r   *jsonschema.Resolved
	err error // the schema itself cannot be used
}

// maxOutputSchemas bounds the cache: past it, it starts over.
const maxOutputSchemas = 1000

func (c *outputSchemas) resolve(schema any) *resolvedSchema {
	raw, err := json.Marshal(schema)
	if err != nil {
		return &resolvedSchema{err: err}
	}
	key := string(raw)
	c.mu.Lock()
	rs, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return rs
	}
	rs = &resolvedSchema{}
	var s jsonschema.Schema
	if rs.err = json.Unmarshal(raw, &s); rs.err == nil {
		rs.r, rs.err = s.Resolve(nil)
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxOutputSchemas {
		c.m = map[string]*resolvedSchema{}
	}
	c.m[key] = rs
	c.mu.Unlock()
	return rs
}

// checkOutput returns res, or, when t declares an output schema that res's
// structured content does not conform to (or res has none), an error
// result that says so and keeps the server's text after the reason. A
// result that is an error already is not checked: the schema describes
// results, not errors. A schema that cannot be resolved is not enforced
// (the server's definition is at fault, and the call itself went well).
func (e *Engine) checkOutput(server string, t *mcp.Tool, res *mcp.CallToolResult) *mcp.CallToolResult {
	if t == nil || t.OutputSchema == nil || res == nil || res.IsError {
		return res
	}
	rs := e.outputs.resolve(t.OutputSchema)
	if rs.err != nil {
		e.log.Warn("a tool's output schema cannot be used: its results are not checked", "server", server, "tool", t.Name, "err", rs.err)
		return res
	}
	var why string
	if res.StructuredContent == nil {
		why = "it declares an output schema but returned no structured content"
	} else if err := validateOutput(rs.r, res.StructuredContent); err != nil {
		why = "its structured content does not match its output schema: " + err.Error()
	} else {
		return res
	}
	out := &mcp.CallToolResult{IsError: true, Meta: res.Meta}
	out.Content = append(out.Content, &mcp.TextContent{Text: fmt.Sprintf("tool %q on %q broke its own contract: %s; its result is not passed on as a success (what it sent follows)", t.Name, server, why)})
	out.Content = append(out.Content, res.Content...)
	return out
}

// listedTool returns the definition of a server's tool as its live
// connection last listed it, or nil when the connection has not listed its
// tools (then nothing is known of its output schema: a server whose pins
// are on is always listed before a call).
func (e *Engine) listedTool(server, name string) *mcp.Tool {
	tools, ok := e.pool.ListedTools(server)
	if !ok {
		return nil
	}
	for _, t := range tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// validateOutput checks structured content, decoded as JSON as a client
// would see it, against a resolved schema.
func validateOutput(r *jsonschema.Resolved, structured any) error {
	raw, err := json.Marshal(structured)
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	return r.Validate(v)
}
