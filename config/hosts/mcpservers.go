package hosts

import (
	"path/filepath"
	"time"
)

// shape says how the server entries of a host in the mcpServers family
// (command, args and env, or url and headers) differ from ours.
type shape struct {
	host    string            // the host's name in messages
	vars    varSyntax         // nil: the host's values hold no references, or ours
	urlKey  string            // another field holding the URL, which wins over url
	urlHTTP bool              // urlKey also means Streamable HTTP
	urlType string            // the transport of a url without a type; "" for ours (Streamable HTTP)
	timeout time.Duration     // unit of "timeout"; 0 when the host has none to map
	floor   time.Duration     // timeouts below it are ignored by the host
	tools   bool              // includeTools and excludeTools mean what ours do
	oauth   *hostOAuth        // where its OAuth settings are, if it has any
	other   map[string]string // known fields we do not model: "" drops silently, else what is lost
}

const (
	lostEnvFile       = "the variables it holds are not passed to the server"
	lostHeadersHelper = "the headers it prints are not sent"
)

var (
	claudeDesktopShape = &shape{host: "Claude Desktop"}
	claudeCodeShape    = &shape{host: "Claude Code", timeout: time.Millisecond, floor: time.Second, oauth: claudeCodeOAuth,
		other: map[string]string{"alwaysLoad": "", "headersHelper": lostHeadersHelper}}
	cursorShape = &shape{host: "Cursor", vars: envColonVars, oauth: cursorOAuth,
		other: map[string]string{"envFile": lostEnvFile}}
	vscodeShape = &shape{host: "VS Code", vars: envColonVars, oauth: vscodeOAuth,
		other: map[string]string{"dev": "", "gallery": "", "version": "", "envFile": lostEnvFile,
			"sandboxEnabled": "the server runs without VS Code's sandbox"}}
	windsurfShape = &shape{host: "Windsurf", vars: envColonVars, urlKey: "serverUrl"}
	// Gemini CLI's own docs long said "url" is the SSE endpoint and
	// "httpUrl" the Streamable HTTP one; its entries written that way mean
	// SSE. An explicit "type" still says which.
	geminiShape = &shape{host: "Gemini CLI", vars: geminiVars, urlKey: "httpUrl", urlHTTP: true, urlType: "sse",
		timeout: time.Millisecond, tools: true, oauth: geminiOAuth,
		other: map[string]string{"trust": "", "description": "", "authProviderType": "",
			"targetAudience": "", "targetServiceAccount": "", "tcp": "Switchboard has no WebSocket transport"}}
)

// entry normalizes one server entry of the host.
func (sh *shape) entry(f *File, name, path string, v any) *Entry {
	e, obj := f.newEntry(name, path, v)
	var alt any
	for _, k := range sortedKeys(obj) {
		val, p := obj[k], joinPath(path, k)
		switch {
		case k == "type":
			e.set(k, normalizeType(val), k)
		case k == "command" || k == "cwd" || k == "url":
			e.set(k, sh.vars.str(f, e, sh.host, p, val), k)
		case k == "args":
			e.set(k, sh.vars.list(f, e, sh.host, p, val), k)
		case k == "env" || k == "headers":
			e.set(k, sh.vars.dict(f, e, sh.host, p, val), k)
		case k == "disabled":
			e.set(k, val, k)
		case k == "enabled":
			// Some hosts' mcpServers entries turn a server off with
			// "enabled": false: it stays off here.
			e.set("disabled", disabledFromEnabled(val), k)
		case k == "timeout" && sh.timeout != 0:
			f.setTimeout(e, k, val, sh.timeout, sh.floor)
		case (k == "includeTools" || k == "excludeTools") && sh.tools:
			e.set(k, val, k)
		case k == sh.urlKey && k != "":
			alt = sh.vars.str(f, e, sh.host, p, val)
		case sh.oauth != nil && k == sh.oauth.key:
			sh.oauth.oauth(f, e, sh.host, p, val, sh.vars)
		default:
			f.unmodeled(e, k, sh.other)
		}
	}
	_, typed := e.Def["type"]
	switch {
	case alt != nil:
		e.set("url", alt, sh.urlKey)
		if sh.urlHTTP {
			e.set("type", "http", sh.urlKey)
		}
	case e.Def["url"] != nil && !typed && sh.urlType != "":
		e.set("type", sh.urlType, "url")
	}
	return e
}

// unmodeled reports a host field that has no place in our schema: silently
// for known fields whose loss changes nothing the server receives.
func (f *File) unmodeled(e *Entry, field string, other map[string]string) {
	lost, known := other[field]
	switch {
	case !known:
		f.warnf(e.Name, e.Path, "unknown field %q ignored", field)
	case lost != "":
		f.warnf(e.Name, joinPath(e.Path, field), "%s is not supported: %s", field, lost)
	}
}

// importJSONFile imports the servers at key of a host's JSON file.
func (imp *reader) importJSONFile(path, key string, sh *shape) {
	root, read := imp.readJSON(path)
	if !read {
		return
	}
	f := imp.newFile(path)
	if v, ok := root[key]; ok {
		f.servers(v, key, sh.entry)
	}
}

// importClaudeDesktop reads claude_desktop_config.json. Claude Desktop ships
// for macOS and Windows; unofficial Linux builds use ~/.config/Claude
// (reported).
func importClaudeDesktop(d Dirs, imp *reader) {
	imp.importJSONFile(d.claudeDesktopConfig(), "mcpServers", claudeDesktopShape)
}

// importClaudeCode reads the user scope of Claude Code: the top-level
// mcpServers of ~/.claude.json. The local scope, projects["/abs/dir"], is
// not imported: it belongs to one directory, keyed by where claude was
// started, and outranks Claude Code's own user and project scopes there,
// which an import below all our sources cannot reproduce.
func importClaudeCode(d Dirs, imp *reader) {
	imp.importJSONFile(d.claudeCodeConfig(), "mcpServers", claudeCodeShape)
}

// importCursor reads ~/.cursor/mcp.json.
func importCursor(d Dirs, imp *reader) {
	imp.importJSONFile(d.cursorConfig(), "mcpServers", cursorShape)
}

// importWindsurf reads the Windsurf editor's mcp_config.json, after the
// JetBrains plugin's and the one Devin Desktop is reported to use, so the
// editor's wins a name they share.
func importWindsurf(d Dirs, imp *reader) {
	for _, path := range d.windsurfConfigs() {
		imp.importJSONFile(path, "mcpServers", windsurfShape)
	}
}

// importVSCode reads the default profile's mcp.json, and the "mcp" block
// that older releases kept in settings.json (VS Code migrates it into
// mcp.json, which is read last so that it wins). Other profiles, Insiders
// and the Copilot CLI's mcp-config.json are not read.
func importVSCode(d Dirs, imp *reader) {
	dir := d.vscodeUserDir()
	settings := filepath.Join(dir, "settings.json")
	if root, read := imp.readJSON(settings); read {
		if mcp, ok := root["mcp"]; ok || root == nil {
			f := imp.newFile(settings)
			if obj, ok := mcp.(map[string]any); ok && obj["servers"] != nil {
				f.servers(obj["servers"], "mcp.servers", vscodeShape.entry)
			}
		}
	}
	imp.importJSONFile(filepath.Join(dir, "mcp.json"), "servers", vscodeShape)
}

// importGemini reads ~/.gemini/settings.json. Names in mcp.excluded, or
// missing from a non-empty mcp.allowed, are imported disabled, since Gemini
// CLI does not start them.
func importGemini(d Dirs, imp *reader) {
	path := d.geminiSettings()
	root, read := imp.readJSON(path)
	if !read {
		return
	}
	f := imp.newFile(path)
	if v, ok := root["mcpServers"]; ok {
		f.servers(v, "mcpServers", geminiShape.entry)
		mcp, _ := root["mcp"].(map[string]any)
		excluded, allowed := nameSet(mcp["excluded"]), nameSet(mcp["allowed"])
		for _, e := range f.Entries {
			if excluded[e.Name] || (len(allowed) > 0 && !allowed[e.Name]) {
				e.Def["disabled"] = true
			}
		}
	}
}

func nameSet(v any) map[string]bool {
	list, _ := v.([]any)
	set := map[string]bool{}
	for _, x := range list {
		if s, ok := x.(string); ok {
			set[s] = true
		}
	}
	return set
}

// ReadProject reads, read-only, the MCP files that hosts keep inside a
// project directory: Cursor's .cursor/mcp.json and VS Code's
// .vscode/mcp.json, by host. They belong to the project, not to the user:
// config counts them only once the project is trusted.
func ReadProject(d Dirs, dir string) map[string][]*File {
	d = d.WithDefaults()
	out := map[string][]*File{}
	for _, p := range []struct {
		host, sub, key string
		sh             *shape
	}{
		{"cursor", ".cursor", "mcpServers", cursorShape},
		{"vscode", ".vscode", "servers", vscodeShape},
	} {
		r := &reader{}
		r.importJSONFile(d.join(dir, p.sub, "mcp.json"), p.key, p.sh)
		if len(r.files) > 0 {
			out[p.host] = r.files
		}
	}
	return out
}
