package config

// Agent Plugins 1.0 packages (https://agent-plugins.org/specification): a
// directory with a plugin.json manifest and, at its root, an mcp.json of
// MCP servers. settings.agentPluginPaths lists the directories to load;
// their servers are named <plugin>__<server> and sit just above host
// imports, so that any file of the user's replaces or disables one.

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/tailscale/hujson"

	"github.com/switchboard-mcp/switchboard/internal/jsonc"
)

// KindPlugin is the source of the servers of an Agent Plugins package:
// the mcp.json at its root. Source.Plugin names the plugin.
const KindPlugin Kind = "plugin"

// Placeholders of an Agent Plugins server, expanded in a stdio server's
// args, env values and cwd, and set in its environment.
const (
	PluginRootVar = "PLUGIN_ROOT" // the plugin's directory
	PluginDataVar = "PLUGIN_DATA" // its data directory (see Dirs.PluginDataDir)
)

// pluginServerFields are the fields of a server in a plugin's mcp.json
// (Agent Plugins 1.0 §7.2.1): any other makes the entry invalid.
var pluginServerFields = []string{"type", "command", "args", "env", "cwd", "url", "headers"}

// pluginNameRE is Agent Plugins 1.0 §5.5's rule for a plugin's name, with
// the length checked apart: lowercase letters, digits, '-' and '.', an
// alphanumeric character at each end.
var pluginNameRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$`)
})

// PluginDataDir is the data directory of the plugin named name: under our
// state directory, created (0700) when one of its servers starts.
func (d Dirs) PluginDataDir(name string) string {
	return d.join(d.StateDir(), "plugins", name)
}

// plugin is one loaded plugin, as its servers' decoder needs it.
type plugin struct {
	name   string // from plugin.json
	prefix string // the name as a server name's prefix: '.' becomes '_'
	root   string // the plugin's directory, absolute, symlinks resolved
	data   string // its data directory
}

// readPlugins loads the directories of settings.agentPluginPaths, in
// order. Nothing a plugin holds fails the configuration closed: a
// directory that is not a plugin is skipped, and so is an invalid
// mcp.json or server entry, each with a problem.
func (c *Config) readPlugins() ([]File, []loaded) {
	var files []File
	var docs []loaded
	seen := map[string]string{} // prefix -> directory
	for _, dir := range c.Settings.AgentPluginPaths {
		if rest, ok := strings.CutPrefix(dir, "~/"); ok {
			dir = c.Dirs.join(c.Dirs.Home, rest)
		}
		p, prob := c.Dirs.openPlugin(dir)
		src := Source{Kind: KindPlugin, Path: filepath.Join(dir, "mcp.json")}
		if prob != nil {
			c.Problems = append(c.Problems, *prob)
			files = append(files, File{Source: src, State: FileInvalid})
			continue
		}
		src.Path, src.Plugin = filepath.Join(p.root, "mcp.json"), p.name
		if other, dup := seen[p.prefix]; dup {
			c.Problems = append(c.Problems, Problem{Severity: SeverityError, File: filepath.Join(p.root, "plugin.json"),
				Message: fmt.Sprintf("plugin %q is skipped: the plugin in %s has the same name (hint: list one of them in settings.agentPluginPaths)", p.name, other)})
			files = append(files, File{Source: src, State: FileInvalid})
			continue
		}
		seen[p.prefix] = p.root
		data, err := readLimited(src.Path, maxFileSize)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			files = append(files, File{Source: src, State: FileMissing}) // a plugin without servers
			continue
		case err != nil:
			c.Problems = append(c.Problems, Problem{Severity: SeverityError, File: src.Path,
				Message: fmt.Sprintf("plugin %q: its servers are skipped: cannot read: %s", p.name, withoutPath(err))})
			files = append(files, File{Source: src, State: FileInvalid})
			continue
		}
		doc, problems := decodePlugin(src, data, p)
		c.Problems = append(c.Problems, problems...)
		files = append(files, File{Source: src, State: stateOf(doc, false)})
		docs = append(docs, loaded{src, doc})
	}
	return files, docs
}

// openPlugin reads and checks the plugin.json of dir. The problem says
// why dir is not a plugin Switchboard can load.
func (d Dirs) openPlugin(dir string) (*plugin, *Problem) {
	manifest := filepath.Join(dir, "plugin.json")
	refuse := func(format string, args ...any) (*plugin, *Problem) {
		return nil, &Problem{Severity: SeverityError, File: manifest,
			Message: "not loaded as an Agent Plugin: " + fmt.Sprintf(format, args...)}
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return refuse("its directory: %v (hint: fix the path in settings.agentPluginPaths)", withoutPath(err))
	}
	data, err := readLimited(filepath.Join(abs, "plugin.json"), maxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return refuse("the directory has no plugin.json (hint: settings.agentPluginPaths lists plugin directories, each with a plugin.json such as {\"name\": \"my-plugin\"})")
	}
	if err != nil {
		return refuse("cannot read: %v", withoutPath(err))
	}
	name, prob := manifestName(manifest, data)
	if prob != nil {
		return nil, prob
	}
	return &plugin{name: name, prefix: strings.ReplaceAll(name, ".", "_"), root: abs, data: d.PluginDataDir(name)}, nil
}

// manifestName returns the name a plugin.json gives its plugin. Other
// fields are tolerated: Switchboard uses none of them.
func manifestName(file string, data []byte) (string, *Problem) {
	root, err := jsonc.Parse(data)
	if err != nil {
		line, col, msg := jsonc.Position(err)
		return "", &Problem{Severity: SeverityError, File: file, Line: line, Col: col, Message: "not loaded as an Agent Plugin: invalid JSON: " + msg}
	}
	d := &decoder{src: Source{Kind: KindPlugin, Path: file}, data: data}
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		d.warnf(&root, "", "not loaded as an Agent Plugin: plugin.json must be an object, not %s", kindName(&root))
		return "", d.pluginProblem()
	}
	for _, m := range d.members(obj, "") {
		if m.key != "name" {
			continue
		}
		lit, ok := m.value.Value.(hujson.Literal)
		ok = ok && lit.Kind() == '"'
		var name string
		if ok {
			name = lit.String()
		}
		switch {
		case !ok:
			d.warnf(m.value, "name", "not loaded as an Agent Plugin: the name must be a string, not %s", kindName(m.value))
		case len(name) == 0 || len(name) > 64 || !pluginNameRE().MatchString(name) || strings.Contains(name, "--") || strings.Contains(name, ".."):
			d.warnf(m.value, "name", "not loaded as an Agent Plugin: invalid name %q: use 1 to 64 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, without \"--\" or \"..\" (Agent Plugins 1.0 §5.5)", truncate(name, 80))
		default:
			return name, nil
		}
		return "", d.pluginProblem()
	}
	return "", &Problem{Severity: SeverityError, File: file, Message: `not loaded as an Agent Plugin: plugin.json has no "name" (hint: add one, such as "name": "my-plugin")`}
}

// pluginProblem returns the decoder's last problem as an error.
func (d *decoder) pluginProblem() *Problem {
	p := d.problems[len(d.problems)-1]
	p.Severity = SeverityError
	return &p
}

// decodePlugin decodes a plugin's mcp.json with the tolerant decoder of
// shared files, and names its servers <plugin>__<server>. Its problems
// never fail the configuration closed: an invalid entry is skipped.
func decodePlugin(src Source, data []byte, p *plugin) (*document, []Problem) {
	d := &decoder{src: src, data: data, plugin: p}
	doc := d.file()
	for i := range d.problems {
		if s := d.problems[i].Server; s != "" {
			d.problems[i].Server = p.prefix + "__" + s
		}
	}
	if doc == nil {
		for i := range d.problems {
			d.problems[i].Message += fmt.Sprintf(" (plugin %q: its servers are skipped)", p.name)
		}
		return nil, d.problems
	}
	servers := doc.servers[:0]
	for _, s := range doc.servers {
		full := p.prefix + "__" + s.Name
		if !ValidName(full) {
			d.problems = append(d.problems, Problem{Severity: SeverityError, File: src.Path, Line: s.line, Col: s.col, Path: s.Path, Server: full,
				Message: fmt.Sprintf("plugin %q: server %q is skipped: its name %s is %d characters, over the limit of 64 (hint: ask the plugin's author for shorter names)", p.name, s.Name, full, len(full))})
			continue
		}
		s.Name = full
		servers = append(servers, s)
	}
	doc.servers = servers
	return doc, d.problems
}

// pluginServer checks a server of a plugin's mcp.json against Agent
// Plugins 1.0 §7.2 and expands ${PLUGIN_ROOT} and ${PLUGIN_DATA} in a
// stdio server's args, env values and cwd. It reports whether the entry
// can be used.
func (d *decoder) pluginServer(r *rawServer, v *hujson.Value, path string) bool {
	p := d.plugin
	if r.URL != "" || r.Command == "" {
		// A remote server: its url and headers are used as written
		// (§7.2.1), so a reference there would be sent literally.
		values := map[string]string{"url": r.URL}
		for k, h := range r.Headers {
			values["headers."+k] = h
		}
		for field, val := range values {
			if refs, err := parseRefs(val); err != nil || len(refs) > 0 {
				d.errorf(v, joinPath(path, field), "a plugin's url and headers are used as written, and hold no references such as ${VAR} (hint: to give the server a credential, define it in your own file)")
				return false
			}
		}
		return true
	}
	for _, k := range sortedKeys(r.Env) {
		if k == PluginRootVar || k == PluginDataVar {
			d.errorf(v, joinPath(joinPath(path, "env"), k), "%s is set by Switchboard for a plugin's server, and the plugin must not set it (Agent Plugins 1.0 §9.2)", k)
			return false
		}
	}
	expand := strings.NewReplacer("${"+PluginRootVar+"}", p.root, "${"+PluginDataVar+"}", p.data)
	for i, a := range r.Args {
		r.Args[i] = expand.Replace(a)
	}
	env := make(map[string]string, len(r.Env)+2)
	for k, val := range r.Env {
		refs, _ := parseRefs(val)
		if slices.ContainsFunc(refs, func(x ref) bool { return x.secret }) {
			d.errorf(v, joinPath(joinPath(path, "env"), k), "a plugin may not name an entry of your credential store: ${secret:…} is refused in a plugin's mcp.json (hint: define the server in your own file)")
			return false
		}
		env[k] = expand.Replace(val)
	}
	env[PluginRootVar], env[PluginDataVar] = p.root, p.data
	r.Env = env
	if !d.pluginCwd(r, v, path, expand) {
		return false
	}
	if cmd, ok := strings.CutPrefix(r.Command, "./"); ok {
		abs, ok := inPlugin(p.root, cmd)
		if !ok {
			d.errorf(v, joinPath(path, "command"), "the command %q leads out of the plugin's directory", r.Command)
			return false
		}
		r.Command = abs
	} else if strings.ContainsAny(r.Command, `/\`) {
		d.errorf(v, joinPath(path, "command"), "a plugin's command is a program's name or a path in the plugin that starts with ./, not %q (Agent Plugins 1.0 §7.2.1)", r.Command)
		return false
	}
	r.DataDir = p.data
	return true
}

// pluginCwd sets a plugin's stdio server's working directory: the plugin's
// directory by default, else ./PATH or ${PLUGIN_ROOT}/PATH in it, or
// ${PLUGIN_DATA}/PATH in its data directory (§7.2.1).
func (d *decoder) pluginCwd(r *rawServer, v *hujson.Value, path string, expand *strings.Replacer) bool {
	p := d.plugin
	base, rest := p.root, ""
	switch cwd := r.Cwd; {
	case cwd == "":
	case cwd == "${"+PluginRootVar+"}" || cwd == "${"+PluginDataVar+"}":
		base = expand.Replace(cwd)
	case strings.HasPrefix(cwd, "./"):
		rest = cwd[2:]
	case strings.HasPrefix(cwd, "${"+PluginRootVar+"}/"):
		rest = strings.TrimPrefix(cwd, "${"+PluginRootVar+"}/")
	case strings.HasPrefix(cwd, "${"+PluginDataVar+"}/"):
		base, rest = p.data, strings.TrimPrefix(cwd, "${"+PluginDataVar+"}/")
	default:
		d.errorf(v, joinPath(path, "cwd"), "a plugin's cwd is ./PATH, ${PLUGIN_ROOT}/PATH or ${PLUGIN_DATA}/PATH, not %q (Agent Plugins 1.0 §7.2.1)", cwd)
		return false
	}
	abs, ok := inPlugin(base, rest)
	if !ok {
		d.errorf(v, joinPath(path, "cwd"), "the cwd %q leads out of the plugin's directory or its data directory", r.Cwd)
		return false
	}
	r.Cwd = abs
	return true
}

// inPlugin joins rel to base and reports whether the result stays inside
// base, by its text and, once it exists, with symlinks resolved.
func inPlugin(base, rel string) (string, bool) {
	abs := filepath.Join(base, filepath.FromSlash(rel))
	if !isUnder(base, abs) {
		return abs, false
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		if rb, err := filepath.EvalSymlinks(base); err == nil && !isUnder(rb, real) {
			return abs, false
		}
	}
	return abs, true
}

// isUnder reports whether p is base or inside it.
func isUnder(base, p string) bool {
	r, err := filepath.Rel(base, p)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// agentPluginPaths decodes settings.agentPluginPaths: directories,
// absolute, starting with "~/" (expanded by Load), or relative to the file
// that names them. A project's file cannot name them: trust covers the
// project's files, not what a plugin's mcp.json says (and a pull can
// change), so its commands would run untrusted.
func (d *decoder) agentPluginPaths(v *hujson.Value, p string) []string {
	list, ok := d.strings(v, p)
	if !ok {
		return nil
	}
	if d.src.InProject() {
		d.warnf(v, p, "ignored: a project's file cannot name Agent Plugins, whose servers project trust does not cover (hint: list them in ~/.config/switchboard/config.json)")
		return nil
	}
	out := make([]string, 0, len(list))
	for i, dir := range list {
		switch {
		case dir == "":
			d.errorf(v, fmt.Sprintf("%s[%d]", p, i), "must be a directory, not empty")
			return nil
		case strings.HasPrefix(dir, "~/") || filepath.IsAbs(dir):
			out = append(out, dir)
		default:
			out = append(out, filepath.Join(filepath.Dir(d.src.Path), dir))
		}
	}
	return out
}
