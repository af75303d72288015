package gateway

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fit checks a facade against the tool it calls, as the server listed it:
// the tool exists, takes every argument the facade passes or fixes, with
// fixed values its schema accepts and passed ones of types it takes, and
// gets every argument it requires. The error names the facade, the field
// and what to do.
func (fc *facade) fit(listed []*mcp.Tool) error {
	t := lookupTool(listed, fc.Tool)
	if t == nil {
		var names []string
		for _, l := range listed {
			if l != nil {
				names = append(names, l.Name)
			}
		}
		slices.Sort(names)
		return fmt.Errorf("facade %q: server %q has no tool %q (its tools: %s): fix Facade.Tool", fc.Name, fc.Server, fc.Tool, list(names))
	}
	if lookupTool(listed, fc.Name) != nil {
		return fmt.Errorf("facade %q: server %q has a tool of that name already: rename the facade", fc.Name, fc.Server)
	}
	up, err := toolSchema(t)
	if err != nil {
		return fmt.Errorf("facade %q: the input schema of %q does not parse: %v", fc.Name, fc.Tool, err)
	}
	if err := fc.fitPassed(up); err != nil {
		return err
	}
	if err := fc.fitFixed(up); err != nil {
		return err
	}
	return fc.fitRequired(up)
}

// fitPassed checks the arguments the facade passes on.
func (fc *facade) fitPassed(up *jsonschema.Schema) error {
	for _, p := range sortedKeys(fc.schema.Properties) {
		to := fc.target(p)
		want, ok := takes(up, to)
		if !ok {
			return fmt.Errorf("facade %q: field %q is passed to %q as %q, which %q does not take (it takes: %s): rename it with Facade.Rename, or drop it from the facade's schema",
				fc.Name, p, fc.Tool, to, fc.Tool, list(sortedKeys(up.Properties)))
		}
		if want == nil {
			continue
		}
		if have := types(fc.schema.Properties[p]); len(have) > 0 && len(types(want)) > 0 && !typesWithin(have, types(want)) {
			return fmt.Errorf("facade %q: field %q is of type %s, but %q takes %q of type %s: change the field's type in the facade's schema",
				fc.Name, p, list(have), fc.Tool, to, list(types(want)))
		}
	}
	return nil
}

// fitFixed checks the fixed arguments against the tool's schema, all
// together (so that references within it resolve), its required fields
// aside.
func (fc *facade) fitFixed(up *jsonschema.Schema) error {
	if len(fc.Fixed) == 0 {
		return nil
	}
	for _, k := range sortedKeys(fc.Fixed) {
		if _, ok := takes(up, k); !ok {
			return fmt.Errorf("facade %q: fixed field %q: %q does not take it (it takes: %s): remove it from Facade.Fixed",
				fc.Name, k, fc.Tool, list(sortedKeys(up.Properties)))
		}
	}
	loose := up.CloneSchemas()
	loose.Required = nil
	rs, err := loose.Resolve(nil)
	if err != nil {
		return fmt.Errorf("facade %q: the input schema of %q cannot be checked: %v", fc.Name, fc.Tool, err)
	}
	// Validate the values as they would be sent: as JSON.
	data, err := json.Marshal(fc.Fixed)
	if err != nil {
		return fmt.Errorf("facade %q: Facade.Fixed is not JSON: %v", fc.Name, err)
	}
	var fixed map[string]any
	_ = json.Unmarshal(data, &fixed)
	for _, k := range sortedKeys(fixed) {
		if err := rs.Validate(map[string]any{k: fixed[k]}); err != nil {
			return fmt.Errorf("facade %q: fixed field %q does not fit %q's schema: %v: fix its value in Facade.Fixed", fc.Name, k, fc.Tool, err)
		}
	}
	return nil
}

// fitRequired checks that the tool gets every argument it requires: fixed,
// or passed from a field the facade requires.
func (fc *facade) fitRequired(up *jsonschema.Schema) error {
	passed := map[string]string{} // tool argument → facade field
	for p := range fc.schema.Properties {
		passed[fc.target(p)] = p
	}
	for _, r := range up.Required {
		if _, ok := fc.Fixed[r]; ok {
			continue
		}
		p, ok := passed[r]
		if !ok {
			return fmt.Errorf("facade %q: %q requires %q, which the facade neither fixes nor passes: add it to Facade.Fixed, or add a required field for it to the facade's schema", fc.Name, fc.Tool, r)
		}
		if !slices.Contains(fc.schema.Required, p) {
			return fmt.Errorf("facade %q: %q requires %q, but the facade's field %q that passes it is optional: list %q in the facade schema's \"required\", or fix it in Facade.Fixed", fc.Name, fc.Tool, r, p, p)
		}
	}
	return nil
}

// toolSchema parses a listed tool's input schema.
func toolSchema(t *mcp.Tool) (*jsonschema.Schema, error) {
	if t.InputSchema == nil {
		return &jsonschema.Schema{Type: "object"}, nil
	}
	data, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// takes reports whether a schema accepts an argument of that name, and its
// schema when the schema names it: a schema that lists properties takes
// only those; one that lists none takes any, unless additionalProperties is
// false.
func takes(s *jsonschema.Schema, name string) (*jsonschema.Schema, bool) {
	if p, ok := s.Properties[name]; ok {
		return p, true
	}
	if len(s.Properties) > 0 {
		return nil, false
	}
	if ap := s.AdditionalProperties; ap != nil {
		data, _ := json.Marshal(ap)
		if string(data) == "false" {
			return nil, false
		}
		return ap, true
	}
	return nil, true
}

// types returns the JSON types a schema declares, if any.
func types(s *jsonschema.Schema) []string {
	if s == nil {
		return nil
	}
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

// typesWithin reports whether every type of have is one of want; an
// integer is a number.
func typesWithin(have, want []string) bool {
	for _, h := range have {
		if !slices.Contains(want, h) && !(h == "integer" && slices.Contains(want, "number")) {
			return false
		}
	}
	return true
}
