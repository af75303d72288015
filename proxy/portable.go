package proxy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// maxPortableFindings bounds the constructs Portable names.
const maxPortableFindings = 3

// unportableKeywords are keywords of JSON Schema that neither Gemini's
// function declarations (an OpenAPI 3.0 subset) nor OpenAI's strict mode
// take: a host that maps a tool's schema onto them refuses the tool or
// drops the constraint.
var unportableKeywords = []string{"allOf", "not", "if", "then", "else", "patternProperties", "dependentSchemas", "dependentRequired"}

// subschemaKeywords are the keywords whose value is a subschema, a list of
// them (items may be either), or a map of names to them.
var (
	schemaValued = []string{"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "additionalItems"}
	schemaLists  = []string{"anyOf", "oneOf", "allOf", "prefixItems"}
	schemaMaps   = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)

// Portable returns what in a tool's schema the single-type dialects that
// hosts map tool schemas onto (Gemini's function declarations, OpenAI's
// strict mode) reject: a "type" that is a list, a bare true or false where
// a schema is due, a $ref to another document, and the keywords those
// dialects lack. Each finding names the construct and where it is (a JSON
// pointer); at most three, in a stable order; none for a portable schema.
// schema is the decoded JSON (any JSON-encodable value is encoded first).
func Portable(schema any) []string {
	var v any
	switch s := schema.(type) {
	case nil:
		return nil
	case map[string]any, bool:
		v = s
	default:
		b, err := json.Marshal(schema)
		if err != nil || json.Unmarshal(b, &v) != nil {
			return nil
		}
	}
	var found []string
	portableWalk(v, "", "", 0, &found)
	if len(found) > maxPortableFindings {
		found = append(found[:maxPortableFindings], fmt.Sprintf("and %d more", len(found)-maxPortableFindings))
	}
	return found
}

// portableWalk adds the findings of node, at path, to found. keyword is
// the keyword whose value node is ("" at the root).
func portableWalk(node any, path, keyword string, depth int, found *[]string) {
	if depth > 32 {
		return
	}
	at := path
	if at == "" {
		at = "/"
	}
	switch n := node.(type) {
	case bool:
		// additionalProperties and the like take a bare boolean in every
		// dialect; elsewhere it stands for a schema.
		if keyword != "additionalProperties" && keyword != "unevaluatedProperties" && keyword != "additionalItems" && keyword != "unevaluatedItems" {
			*found = append(*found, fmt.Sprintf("bare %t for a schema at %s", n, at))
		}
		return
	case map[string]any:
		portableNode(n, at, found)
		for _, k := range schemaValued {
			if c, ok := n[k]; ok {
				if l, isList := c.([]any); isList && k == "items" {
					for i, e := range l {
						portableWalk(e, path+"/items/"+strconv.Itoa(i), "", depth+1, found)
					}
					continue
				}
				portableWalk(c, path+"/"+k, k, depth+1, found)
			}
		}
		for _, k := range schemaLists {
			l, _ := n[k].([]any)
			for i, e := range l {
				portableWalk(e, path+"/"+k+"/"+strconv.Itoa(i), "", depth+1, found)
			}
		}
		for _, k := range schemaMaps {
			m, _ := n[k].(map[string]any)
			for _, name := range sortedKeys(m) {
				portableWalk(m[name], path+"/"+k+"/"+pointerEscape(name), "", depth+1, found)
			}
		}
	}
}

// portableNode adds the findings of one schema object's own keywords.
func portableNode(n map[string]any, at string, found *[]string) {
	if l, ok := n["type"].([]any); ok {
		b, _ := json.Marshal(l)
		*found = append(*found, fmt.Sprintf("type list %s at %s (use one type, or anyOf)", b, at))
	}
	if ref, ok := n["$ref"].(string); ok && ref != "" && !strings.HasPrefix(ref, "#") {
		*found = append(*found, fmt.Sprintf("$ref to another document (%s) at %s", ref, at))
	}
	for _, k := range unportableKeywords {
		if _, ok := n[k]; ok {
			*found = append(*found, fmt.Sprintf("%q at %s", k, at))
		}
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pointerEscape escapes a name for a JSON pointer (RFC 6901).
func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
