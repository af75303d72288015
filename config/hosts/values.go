package hosts

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"
)

// varSyntax translates the variable references of one host into ours. It
// returns the first reference that has no equivalent, if any.
type varSyntax func(s string) (out, unsupported string)

var (
	braceRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{[^}]*\}`) })
	dollarRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$(?:\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)`) })
	opencodeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{(env|file):([^}]*)\}`) })
)

// envColonVars is the syntax of VS Code, Cursor and Windsurf: ${env:NAME}
// is an environment variable; every other ${…} (${input:id},
// ${workspaceFolder}, ${file:path}, …) means something only the host knows.
func envColonVars(s string) (string, string) {
	bad := ""
	out := braceRE().ReplaceAllStringFunc(s, func(m string) string {
		if name, ok := strings.CutPrefix(m[2:len(m)-1], "env:"); ok {
			return "${" + name + "}"
		}
		if bad == "" {
			bad = m
		}
		return m
	})
	return out, bad
}

// geminiVars is Gemini CLI's syntax: $VAR, ${VAR} and ${VAR:-default}.
func geminiVars(s string) (string, string) {
	return dollarRE().ReplaceAllStringFunc(s, func(m string) string {
		if m[1] == '{' {
			return m
		}
		return "${" + m[1:] + "}"
	}), ""
}

// opencodeVars is opencode's syntax: {env:VAR} and {file:path}.
func opencodeVars(s string) (string, string) {
	bad := ""
	out := opencodeRE().ReplaceAllStringFunc(s, func(m string) string {
		sub := opencodeRE().FindStringSubmatch(m)
		if sub[1] == "env" {
			return "${" + strings.TrimSpace(sub[2]) + "}"
		}
		if bad == "" {
			bad = m
		}
		return m
	})
	return out, bad
}

// str translates a string value found at path; other values pass through
// for validation to judge. A reference we cannot express skips the entry.
func (vs varSyntax) str(f *File, e *Entry, host, path string, v any) any {
	s, ok := v.(string)
	if !ok || vs == nil {
		return v
	}
	out, bad := vs(s)
	if bad != "" && !e.Skip {
		e.Skip = true
		if id, ok := strings.CutPrefix(bad, "${input:"); ok {
			f.warnf(e.Name, path, "uses the VS Code input %q, which Switchboard cannot resolve: VS Code prompts for its value and keeps it (server skipped; hint: add the server to Switchboard with a reference such as ${API_KEY})", strings.TrimSuffix(id, "}"))
		} else {
			f.warnf(e.Name, path, "uses %s, which only %s can expand (server skipped)", bad, host)
		}
	}
	return out
}

// list translates the strings of an array.
func (vs varSyntax) list(f *File, e *Entry, host, path string, v any) any {
	arr, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(arr))
	for i, x := range arr {
		out[i] = vs.str(f, e, host, fmt.Sprintf("%s[%d]", path, i), x)
	}
	return out
}

// dict translates the values of an object of strings (env, headers). A null
// value, which unsets an inherited variable in VS Code, has no equivalent:
// it is dropped with a warning.
func (vs varSyntax) dict(f *File, e *Entry, host, path string, v any) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(obj))
	for _, k := range sortedKeys(obj) {
		p := joinPath(path, k)
		if obj[k] == nil {
			f.warnf(e.Name, p, "null ignored: Switchboard cannot unset a variable or header")
			continue
		}
		out[k] = vs.str(f, e, host, p, obj[k])
	}
	return out
}

// normalizeType maps a host's transport name to ours. Names we do not know
// pass through, for validation to report.
func normalizeType(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	switch strings.ToLower(s) {
	case "stdio":
		return "stdio"
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		return "http"
	case "sse":
		return "sse"
	}
	return s
}

// maxTimeoutMs is the largest requestTimeoutMs our schema accepts.
const maxTimeoutMs = 24 * 60 * 60 * 1000

// setTimeout converts a host's timeout, counted in unit, to requestTimeoutMs.
// A value the host ignores (below floor) is dropped; a value our schema
// cannot hold is dropped with a warning rather than costing the server.
func (f *File) setTimeout(e *Entry, field string, v any, unit, floor time.Duration) {
	n, ok := number(v)
	p := joinPath(e.Path, field)
	if !ok {
		f.warnf(e.Name, p, "must be a number, not %s; ignored", kindOf(v))
		return
	}
	ms := math.Round(n * float64(unit) / float64(time.Millisecond))
	if floor > 0 && ms < float64(floor/time.Millisecond) {
		return
	}
	if ms < 1 || ms > maxTimeoutMs {
		f.warnf(e.Name, p, "%v is outside 1ms to 24h; ignored", v)
		return
	}
	e.set("requestTimeoutMs", int64(ms), field)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// kindOf names the JSON (or TOML) kind of a decoded value.
func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any, []map[string]any:
		return "an array"
	case string:
		return "a string"
	case json.Number, int64, float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("a %T", v)
}
