package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The go-sdk (v1.8.0) decodes every content block of a tool result or prompt
// message in CallToolResult.UnmarshalJSON / contentFromWire (mcp/content.go),
// and a type it does not know fails the whole result: "unrecognized content
// type". A newer server, or one with a private extension, would make every
// such call fail, though its other blocks are fine.
//
// sanitizeMessage repairs such a message before the SDK sees it: each block
// of an unknown type becomes a text block that says so and carries the
// original block in its _meta under unsupportedContentKey, so nothing is lost.

// unsupportedContentKey is the _meta key that keeps an unsupported block.
const unsupportedContentKey = "io.switchboard/unsupported-content"

// knownContent are the content types the SDK decodes.
var knownContent = map[string]bool{
	"text": true, "image": true, "audio": true, "resource_link": true,
	"resource": true, "tool_use": true, "tool_result": true,
}

var contentKey = []byte(`"content"`)

// inspect checks that line is one JSON value, and repairs content blocks of
// unknown types in it (see sanitizeMessage). Every message from a stdio
// server passes here, so a message is parsed once: a message that cannot
// hold content is only validated, and one that may is decoded just far
// enough to see its content types, which validates it on the way
// (json.Unmarshal checks the whole input before it decodes).
func inspect(line []byte) (out []byte, ok bool) {
	if len(line) == 0 || line[0] != '{' || !bytes.Contains(line, contentKey) {
		return line, json.Valid(line)
	}
	unknown, err := hasUnknownContent(line)
	if err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, false
		}
	}
	if !unknown {
		return line, true
	}
	fixed, _ := rewriteContent(line)
	return fixed, true
}

// sanitizeMessage returns msg, a JSON-RPC message, with content blocks of
// unknown types in result.content and result.messages[].content replaced,
// and whether it replaced any.
func sanitizeMessage(msg []byte) ([]byte, bool) {
	if len(msg) == 0 || msg[0] != '{' || !bytes.Contains(msg, contentKey) {
		return msg, false
	}
	if unknown, _ := hasUnknownContent(msg); !unknown {
		return msg, false
	}
	return rewriteContent(msg)
}

// rewriteContent replaces the content blocks of unknown types in msg.
func rewriteContent(msg []byte) ([]byte, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m["result"] == nil {
		return msg, false
	}
	result, changed := sanitizeResult(m["result"])
	if !changed {
		return msg, false
	}
	m["result"] = result
	out, err := json.Marshal(m)
	if err != nil {
		return msg, false
	}
	return out, true
}

// hasUnknownContent reports whether msg holds a content block that needs
// repair. It decodes only the types, which is cheaper than a rewrite: every
// tool result passes here. A message it cannot decode so (err != nil) may
// need repair: the full pass decides, unless err is a *json.SyntaxError,
// when msg is not JSON at all.
func hasUnknownContent(msg []byte) (bool, error) {
	type block struct {
		Type string `json:"type"`
	}
	var m struct {
		Result *struct {
			Content  []block `json:"content"`
			Messages []struct {
				Content block `json:"content"`
			} `json:"messages"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return true, err
	}
	if m.Result == nil {
		return false, nil
	}
	for _, b := range m.Result.Content {
		if !knownContent[b.Type] {
			return true, nil
		}
	}
	for _, pm := range m.Result.Messages {
		if !knownContent[pm.Content.Type] {
			return true, nil
		}
	}
	return false, nil
}

func sanitizeResult(raw json.RawMessage) (json.RawMessage, bool) {
	var r map[string]json.RawMessage
	if json.Unmarshal(raw, &r) != nil {
		return raw, false
	}
	changed := false
	if c, ok := r["content"]; ok {
		if blocks, ch := sanitizeBlocks(c); ch {
			r["content"], changed = blocks, true
		}
	}
	if ms, ok := r["messages"]; ok {
		var messages []map[string]json.RawMessage
		if json.Unmarshal(ms, &messages) == nil {
			for _, m := range messages {
				if b, ch := sanitizeBlock(m["content"]); ch {
					m["content"], changed = b, true
				}
			}
			if changed {
				r["messages"], _ = json.Marshal(messages)
			}
		}
	}
	if !changed {
		return raw, false
	}
	out, err := json.Marshal(r)
	if err != nil {
		return raw, false
	}
	return out, true
}

func sanitizeBlocks(raw json.RawMessage) (json.RawMessage, bool) {
	var blocks []json.RawMessage
	if json.Unmarshal(raw, &blocks) != nil {
		return raw, false
	}
	changed := false
	for i, b := range blocks {
		if nb, ch := sanitizeBlock(b); ch {
			blocks[i], changed = nb, true
		}
	}
	if !changed {
		return raw, false
	}
	out, err := json.Marshal(blocks)
	if err != nil {
		return raw, false
	}
	return out, true
}

// sanitizeBlock replaces one block of an unknown type.
func sanitizeBlock(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 {
		return raw, false
	}
	var b struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &b) != nil || knownContent[b.Type] {
		return raw, false
	}
	out, err := json.Marshal(map[string]any{
		"type":  "text",
		"text":  fmt.Sprintf("[content of unsupported type %q omitted]", b.Type),
		"_meta": map[string]json.RawMessage{unsupportedContentKey: raw},
	})
	if err != nil {
		return raw, false
	}
	return out, true
}
