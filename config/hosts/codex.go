package hosts

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
)

// importCodex reads $CODEX_HOME/config.toml (default ~/.codex/config.toml).
// Project files (.codex/config.toml, trusted projects only) are not read.
func importCodex(d Dirs, imp *reader) {
	path := d.codexConfig()
	data, ok := imp.read(path)
	if !ok {
		return
	}
	f := imp.newFile(path)
	var root map[string]any
	if _, err := toml.Decode(string(data), &root); err != nil {
		line, col, msg := tomlError(err)
		imp.fileProblem(path, line, col, "invalid TOML: %s", msg)
		return
	}
	if v, ok := root["mcp_servers"]; ok {
		f.servers(v, "mcp_servers", codexEntry)
	}
}

// varNameRE matches the name of an environment variable.
var varNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

var quotedRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"[^"]*"`) })

// tomlError returns the position and message of a TOML error. The parser
// quotes what it found, which may be part of a secret: quotes are elided.
func tomlError(err error) (line, col int, msg string) {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return pe.Position.Line, pe.Position.Col, quotedRE().ReplaceAllString(pe.Message, `"…"`)
	}
	return 0, 0, quotedRE().ReplaceAllString(err.Error(), `"…"`)
}

// codexOther are the fields of a Codex server we do not model.
var codexOther = map[string]string{
	"startup_timeout_sec": "", "startup_timeout_ms": "", "required": "", "default_tools_approval_mode": "",
	"tools": "", "oauth": "", "supports_parallel_tool_calls": "",
	"oauth_resource":      "Switchboard sends the server's URL as the OAuth resource",
	"http_headers_helper": lostHeadersHelper,
}

// codexEntry normalizes a [mcp_servers.NAME] table.
func codexEntry(f *File, name, path string, v any) *Entry {
	e, obj := f.newEntry(name, path, v)
	env, headers := map[string]any{}, map[string]any{}
	for _, k := range sortedKeys(obj) {
		val, p := obj[k], joinPath(path, k)
		switch k {
		case "command", "args", "cwd", "url":
			e.set(k, val, k)
		case "env", "env_vars", "http_headers", "env_http_headers", "bearer_token_env_var":
			f.codexVariables(e, k, val, env, headers)
		case "bearer_token":
			f.warnf(name, p, "an inline bearer_token is not supported, by Codex either: use bearer_token_env_var (the value is not shown; server skipped)")
			e.Skip = true
		case "enabled":
			if b, ok := val.(bool); !ok || !b {
				e.set("disabled", disabledFromEnabled(val), k)
			}
		case "enabled_tools":
			e.set("includeTools", val, k)
		case "disabled_tools":
			e.set("excludeTools", val, k)
		case "tool_timeout_sec":
			f.setTimeout(e, k, val, time.Second, 0)
		case "scopes":
			e.set("oauth", map[string]any{"scopes": val}, k)
			e.origin("oauth.scopes", k)
		default:
			f.unmodeled(e, k, codexOther)
		}
	}
	if len(env) > 0 {
		e.Def["env"] = env
	}
	if len(headers) > 0 {
		e.Def["headers"] = headers
	}
	return e
}

// codexVariables adds the field k to env or headers. Codex has no variable
// syntax: env and http_headers hold values, while env_vars,
// env_http_headers and bearer_token_env_var name environment variables,
// which become our references. Fields are visited in sorted order, so a
// value in env wins over the same name in env_vars.
func (f *File) codexVariables(e *Entry, k string, v any, env, headers map[string]any) {
	p := joinPath(e.Path, k)
	switch k {
	case "env", "http_headers":
		dst, field := env, "env"
		if k == "http_headers" {
			dst, field = headers, "headers"
		}
		m, _ := f.table(e, p, v)
		for _, key := range sortedKeys(m) {
			dst[key] = m[key]
			e.origin(field+"."+key, k+"."+key)
		}
	case "env_http_headers":
		m, _ := f.table(e, p, v)
		for _, h := range sortedKeys(m) {
			if ref, ok := f.varName(e, joinPath(p, h), m[h]); ok {
				headers[h] = ref
				e.origin("headers."+h, k+"."+h)
			}
		}
	case "env_vars":
		list, ok := anyList(v)
		if !ok {
			f.warnf(e.Name, p, "must be an array, not %s (server skipped)", kindOf(v))
			e.Skip = true
		}
		for i, x := range list {
			if t, ok := x.(map[string]any); ok { // { name = "…", source = "local" | "remote" }
				x = t["name"]
			}
			ref, ok := f.varName(e, fmt.Sprintf("%s[%d]", p, i), x)
			if name := strings.TrimSuffix(strings.TrimPrefix(ref, "${"), "}"); ok && env[name] == nil {
				env[name] = ref
				e.origin("env."+name, fmt.Sprintf("%s[%d]", k, i))
			}
		}
	case "bearer_token_env_var":
		if ref, ok := f.varName(e, p, v); ok {
			headers["Authorization"] = "Bearer " + ref
			e.origin("headers.Authorization", k)
		}
	}
}

// anyList returns the elements of a TOML array, of values or of tables.
func anyList(v any) ([]any, bool) {
	switch l := v.(type) {
	case []any:
		return l, true
	case []map[string]any:
		out := make([]any, len(l))
		for i, t := range l {
			out[i] = t
		}
		return out, true
	}
	return nil, false
}

// table returns a TOML table; anything else skips the server.
func (f *File) table(e *Entry, path string, v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		f.warnf(e.Name, path, "must be a table, not %s (server skipped)", kindOf(v))
		e.Skip = true
	}
	return m, ok
}

// varName turns the name of an environment variable into our reference.
func (f *File) varName(e *Entry, path string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok || !varNameRE().MatchString(s) {
		what := kindOf(v)
		if ok {
			what = "not a variable name"
		}
		f.warnf(e.Name, path, "must name an environment variable (letters, digits and '_'), but is %s (server skipped)", what)
		e.Skip = true
		return "", false
	}
	return "${" + s + "}", true
}
