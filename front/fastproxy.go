package front

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// proxyInput is what the fast lane needs to take calls of the proxy tool
// (the mcp tool) from go-sdk: its name, and its input schema resolved as
// go-sdk resolves a tool's, to give its handler the arguments go-sdk
// would.
type proxyInput struct {
	name     string
	resolved *jsonschema.Resolved
	defaults bool // the schema has defaults to apply (the proxy tool's has none)
}

func newProxyInput(name string, schema json.RawMessage) (*proxyInput, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, err
	}
	// As go-sdk's AddTool does (setSchema).
	resolved, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		return nil, fmt.Errorf("resolving: %w", err)
	}
	// Without a "default" anywhere, applying defaults changes nothing.
	return &proxyInput{name: name, resolved: resolved, defaults: bytes.Contains(schema, []byte(`"default"`))}, nil
}

// args returns the arguments go-sdk would hand the proxy tool's handler
// for raw, a call's arguments as the client wrote them (nil if it wrote
// none): decoded into a map, the schema's defaults applied, validated, and
// encoded again, as go-sdk's applySchema does. It reports false where go-sdk
// would refuse them: go-sdk is then to answer, with its own error.
//
// go-sdk decodes with segmentio's decoder, this with encoding/json: into a
// map of plain JSON values the two agree (float64 numbers, last of
// duplicate keys) on valid UTF-8 nested no deeper than go-sdk allows,
// which scanCall checks of the whole body first (jsonscan.MaxDepth).
// FuzzProxyArgs holds them to it.
func (p *proxyInput) args(raw []byte) (json.RawMessage, bool) {
	m := make(map[string]any)
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, false
		}
	}
	var v any = m
	if p.defaults && p.resolved.ApplyDefaults(&v) != nil {
		return nil, false
	}
	if p.resolved.Validate(&v) != nil {
		return nil, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	return out, true
}
