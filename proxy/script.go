package proxy

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The mcpScript tool: code mode (settings.scriptMode). An agent sends one
// JavaScript program that searches, describes and calls tools and
// combines their results; only its answer enters the context. The runtime
// is package internal/script; this is the tool's contract: its definition
// and its answer.

// ScriptToolName is the code-mode tool's name, as pi-mcp-adapter names it,
// so that agents and prompts written for it find it.
const ScriptToolName = "mcpScript"

// ScriptToolDescription is the code-mode tool's description.
const ScriptToolDescription = `Run a short JavaScript program that uses several tools and returns only its answer. For one call, use the mcp tool instead.
Inside: await tools.search({query, server?, limit?, offset?}), await tools.describe({path, server?}) (its inputShape and outputShape are TypeScript), await tools.call(path, args, {server}?); each resolves to {ok: true, data} or {ok: false, error: {code, message}}; a call's data is the raw MCP result ({content: [{type: "text", text}], structuredContent?}). console.log is captured. Top-level await works; the answer is what the script returns, or its last expression. No file system, network, timers or require; a deadline, at most 100 tool calls, and a memory bound.`

// ScriptInputSchema is the code-mode tool's input schema.
var ScriptInputSchema = json.RawMessage(`{"type":"object","properties":{"script":{"type":"string","description":"JavaScript: the body of an async function"}},"required":["script"],"additionalProperties":false}`)

// ScriptRequest is the code-mode tool's arguments.
type ScriptRequest struct {
	Script string `json:"script"`
}

// ParseScript reads the code-mode tool's arguments.
func ParseScript(args json.RawMessage) (*ScriptRequest, error) {
	var r ScriptRequest
	d := json.NewDecoder(strings.NewReader(string(args)))
	d.DisallowUnknownFields()
	if err := d.Decode(&r); err != nil {
		return nil, fmt.Errorf(`reading the arguments of %s: %v; send {"script": "…JavaScript…"}`, ScriptToolName, err)
	}
	if strings.TrimSpace(r.Script) == "" {
		return nil, fmt.Errorf(`%s needs a script: {"script": "const r = await tools.call(…); return r.data"}`, ScriptToolName)
	}
	return &r, nil
}

// Script is the answer of a script's run: value is its answer as JSON
// (nil for none). The text is the answer (a string as it is, anything
// else as JSON) and then the console's lines; a failure says why, where,
// and the console's lines so far.
func Script(value json.RawMessage, info ScriptInfo) *Result {
	r := &Result{SpillName: "script", Details: Details{Operation: "script", Script: &info}}
	var lines []string
	if info.Error != nil {
		r.IsError = true
		r.Details.IsError = true
		r.Details.Error = shorten(info.Error.Message, MaxDetailsError)
		lines = append(lines, info.Error.Message)
	} else if value != nil {
		var v any
		if json.Unmarshal(value, &v) == nil {
			r.Details.Structured = v
		}
		if s, ok := v.(string); ok {
			lines = append(lines, s)
		} else {
			lines = append(lines, string(value))
		}
	} else if len(info.Logs) == 0 {
		lines = append(lines, "(the script returned nothing and logged nothing)")
	}
	if len(info.Logs) > 0 {
		lines = append(lines, "console:")
		lines = append(lines, info.Logs...)
	}
	r.Text = strings.Join(lines, "\n")
	return r
}

// Declaration is a described tool as a TypeScript declaration of the
// function tools.call makes of it: its arguments' shape and the shape of
// the result's promise, so that a model writes a correct call the first
// time.
func Declaration(t *ToolDetail) string {
	in := t.InputShape
	if in == "" {
		in = "{}"
	}
	out := "{ content: Array<{ type: string; text?: string }>; isError?: boolean }"
	if t.OutputShape != "" {
		out = "{ content: Array<{ type: string; text?: string }>; structuredContent: " + t.OutputShape + "; isError?: boolean }"
	}
	return fmt.Sprintf("(args: %s) => Promise<%s>", in, out)
}
