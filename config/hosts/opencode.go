package hosts

import (
	"fmt"
	"path/filepath"
)

// importOpencode reads opencode's global opencode.json, then opencode.jsonc,
// in $XDG_CONFIG_HOME/opencode (~/.config/opencode on macOS too).
func importOpencode(d Dirs, imp *reader) {
	for _, name := range []string{"opencode.json", "opencode.jsonc"} {
		path := filepath.Join(d.opencodeDir(), name)
		root, read := imp.readJSON(path)
		if !read {
			continue
		}
		f := imp.newFile(path)
		if mcp, ok := root["mcp"]; ok {
			opencodeServers(f, mcp)
		}
	}
}

// opencodeServers tells the two shapes apart: V2 keeps servers in
// mcp.servers, V1 directly in mcp. An mcp.servers with a "type", or whose
// values are not all objects, is a V1 server named "servers".
func opencodeServers(f *File, mcp any) {
	obj, ok := mcp.(map[string]any)
	if !ok {
		f.warnf("", "mcp", "must be an object, not %s (nothing imported)", kindOf(mcp))
		return
	}
	if servers, ok := obj["servers"].(map[string]any); ok && opencodeV2(servers) {
		f.servers(servers, "mcp.servers", opencodeEntry)
		return
	}
	f.servers(obj, "mcp", opencodeEntry)
}

func opencodeV2(servers map[string]any) bool {
	if _, ok := servers["type"]; ok {
		return false
	}
	for _, v := range servers {
		if _, ok := v.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// opencodeEntry normalizes an entry of either shape: "local" runs command
// (one array, program first) with environment, "remote" is reached at url.
// V1 turns a server off with enabled: false, V2 with disabled: true.
func opencodeEntry(f *File, name, path string, v any) *Entry {
	const host = "opencode"
	vars := varSyntax(opencodeVars)
	e, obj := f.newEntry(name, path, v)
	for _, k := range sortedKeys(obj) {
		val, p := obj[k], joinPath(path, k)
		switch k {
		case "type":
			switch val {
			case "local":
				e.set(k, "stdio", k)
			case "remote":
				e.set(k, "http", k) // opencode tries Streamable HTTP first, then SSE
			default:
				e.set(k, normalizeType(val), k)
			}
		case "command":
			list, ok := val.([]any)
			if !ok {
				e.set(k, vars.str(f, e, host, p, val), k)
				continue
			}
			if len(list) == 0 {
				e.set(k, "", k)
				continue
			}
			list = vars.list(f, e, host, p, list).([]any)
			e.set(k, list[0], k+"[0]")
			if len(list) > 1 {
				e.set("args", list[1:], k)
				for i := 1; i < len(list); i++ {
					e.origin(fmt.Sprintf("args[%d]", i-1), fmt.Sprintf("%s[%d]", k, i))
				}
			}
		case "environment":
			e.set("env", vars.dict(f, e, host, p, val), k)
		case "cwd", "url":
			e.set(k, vars.str(f, e, host, p, val), k)
		case "headers":
			e.set(k, vars.dict(f, e, host, p, val), k)
		case "enabled":
			if b, ok := val.(bool); !ok || !b {
				e.set("disabled", disabledFromEnabled(val), k)
			}
		case "disabled":
			e.set(k, val, k)
		case "oauth":
			opencodeOAuth.oauth(f, e, host, p, val, vars)
		case "timeout":
			// timeout bounds only the fetching of the tool list (default
			// 5s), not calls: as requestTimeoutMs it would cut calls short.
		default:
			f.unmodeled(e, k, nil)
		}
	}
	return e
}

// disabledFromEnabled inverts a boolean; anything else passes through for
// validation to report.
func disabledFromEnabled(v any) any {
	if b, ok := v.(bool); ok {
		return !b
	}
	return v
}
