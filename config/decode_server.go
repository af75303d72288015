package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tailscale/hujson"
)

var serverFields = []string{
	"type", "command", "args", "cwd", "env", "url", "headers", "lifecycle", "idleTimeout",
	"requestTimeoutMs", "reconnect", "disabled", "includeTools", "excludeTools", "directTools",
	"searchKeywords", "protocolVersion", "oauth", "approve", "pin", "redirects", "roots", "toolPrefix",
	"bearerToken", "socket", "perUser",
}

// rawServer is a server definition as decoded, before defaults.
type rawServer struct {
	Server
	typeSet        bool
	idleTimeout    *time.Duration
	requestTimeout *time.Duration
	directTools    *DirectTools
	perUserAt      *hujson.Value
	bearer         *string       // bearerToken as written
	bearerAt       *hujson.Value // where
	fields         int           // how many fields were present
}

// MaxServers bounds the servers of one file and of the whole
// configuration. Real setups define a few to a few dozen servers, and hosts
// cap far lower (Windsurf allows 100 active tools in all). Every server may
// be a child process and a connection, is listed in status and in the proxy
// tool's description, and some work is done for every server each time one
// changes state, so the cost grows faster than the count: a file of 100,000
// servers kept a command busy for minutes. A thousand is far above any real
// need and keeps that work small.
const MaxServers = 1000

func (d *decoder) servers(v *hujson.Value) []*Server {
	obj, ok := d.object(v, "mcpServers")
	if !ok {
		return nil
	}
	if n := len(obj.Members); n > MaxServers {
		d.errorf(&obj.Members[MaxServers].Name, "mcpServers", "%d servers is over the limit of %d (hint: remove the servers you do not use)", n, MaxServers)
		return nil
	}
	var out []*Server
	for _, m := range d.members(obj, "mcpServers") {
		path := joinPath("mcpServers", m.key)
		if !ValidName(m.key) {
			d.errorf(m.value, path, "invalid server name %q: use 1 to 64 letters, digits, '-' or '_'", m.key)
			continue
		}
		if s := d.server(m.key, m.value, path); s != nil {
			out = append(out, s)
		}
	}
	return out
}

func (d *decoder) server(name string, v *hujson.Value, path string) *Server {
	r := &rawServer{Server: Server{Name: name, Source: d.src, Path: path}}
	r.line, r.col = d.position(v)
	// An error in this entry is this server's: the server is kept, invalid
	// (Load gives it the error), so that it still overrides what lower
	// files define under its name, and the other servers work.
	d.entry = name
	defer func() { d.entry = "" }()
	before := len(d.problems)
	obj, ok := d.object(v, path)
	if !ok {
		return d.invalid(r, before)
	}
	for _, m := range d.members(obj, path) {
		r.fields++
		d.serverField(r, m, joinPath(path, m.key))
	}
	if d.hasErrorSince(before) {
		return d.invalid(r, before)
	}
	if r.fields == 1 && r.Disabled {
		r.stub = true
		return r.finish()
	}
	if d.plugin != nil && !d.pluginServer(r, v, path) {
		return nil
	}
	if !d.checkServer(r, v, path) {
		return d.invalid(r, before)
	}
	return r.finish()
}

// invalid returns the definition of a server whose entry has an error
// (the first since problem before): nothing of it is used but its name and
// place, and its values are dropped, so that no half-checked value (a
// literal credential) goes anywhere. Its Err is that error.
func (d *decoder) invalid(r *rawServer, before int) *Server {
	s := &Server{Name: r.Name, Source: r.Source, Path: r.Path, line: r.line, col: r.col, IdleTimeout: -1,
		Lifecycle: LifecycleLazy, ProtocolVersion: "auto"}
	for _, p := range d.problems[before:] {
		if p.Severity == SeverityError {
			s.Err = fmt.Errorf("server %q: %s", r.Name, p.Error())
			break
		}
	}
	return s
}

func (d *decoder) hasErrorSince(n int) bool {
	for _, p := range d.problems[n:] {
		if p.Severity == SeverityError {
			return true
		}
	}
	return false
}

// finish keeps what the file set; Load fills defaults from settings.
func (r *rawServer) finish() *Server {
	s := r.Server
	s.IdleTimeout = -1
	if r.idleTimeout != nil {
		s.IdleTimeout = *r.idleTimeout
		s.idleSet = true
	}
	if r.requestTimeout != nil {
		s.RequestTimeout = *r.requestTimeout
	}
	if r.directTools != nil {
		s.DirectTools = *r.directTools
		s.directSet = true
	}
	s.rootsSet = s.Roots != nil
	if s.Lifecycle == "" {
		s.Lifecycle = LifecycleLazy
	}
	if s.ProtocolVersion == "" {
		s.ProtocolVersion = "auto"
	}
	return &s
}

func (d *decoder) serverField(r *rawServer, m member, p string) {
	v := m.value
	if d.plugin != nil && !slices.Contains(pluginServerFields, m.key) {
		d.errorf(v, p, "%q is not a field of an Agent Plugins 1.0 server (its fields: %s)", m.key, strings.Join(pluginServerFields, ", "))
		return
	}
	switch m.key {
	case "type":
		if t, ok := d.str(v, p); ok {
			d.transport(r, v, p, t)
		}
	case "command":
		if c, ok := d.text(v, p); ok {
			r.Command = c
			if c == "" {
				d.errorf(v, p, "must not be empty")
			}
		}
	case "args":
		r.Args, _ = d.texts(v, p)
	case "cwd":
		r.Cwd, _ = d.text(v, p)
	case "env":
		r.Env, _ = d.env(v, p)
	case "url":
		r.URL, _ = d.str(v, p)
	case "socket":
		r.Socket, _ = d.str(v, p)
	case "headers":
		r.Headers, _ = d.stringMap(v, p)
	case "bearerToken":
		if str, ok := d.str(v, p); ok {
			r.bearer, r.bearerAt = &str, v
		}
	case "redirects":
		if rd, ok := d.str(v, p); ok {
			switch Redirects(rd) {
			case RedirectsSameOrigin, RedirectsWithoutCredentials:
				r.Redirects = Redirects(rd)
			default:
				d.errorf(v, p, `must be "same-origin" (the default: a redirect to another origin fails) or "follow-without-credentials" (follow it without the server's headers and token), not %q`, rd)
			}
		}
	case "lifecycle":
		if l, ok := d.str(v, p); ok {
			switch Lifecycle(l) {
			case LifecycleLazy, LifecycleEager, LifecycleKeepAlive, LifecycleLazyKeepAlive:
				r.Lifecycle = Lifecycle(l)
			default:
				d.errorf(v, p, `must be "lazy", "eager", "keep-alive" or "lazy-keep-alive", not %q`, l)
			}
		}
	case "idleTimeout":
		if n, ok := d.integer(v, p, 0, 7*24*60); ok {
			t := time.Duration(n) * time.Minute
			r.idleTimeout = &t
		}
	case "requestTimeoutMs":
		if n, ok := d.integer(v, p, 1, 24*60*60*1000); ok {
			t := time.Duration(n) * time.Millisecond
			r.requestTimeout = &t
		}
	case "reconnect":
		d.reconnect(r, v, p)
	case "disabled":
		r.Disabled, _ = d.boolean(v, p)
	case "perUser":
		if b, ok := d.boolean(v, p); ok {
			r.PerUser, r.perUserAt = &b, v
		}
	case "includeTools":
		r.IncludeTools, _ = d.strings(v, p)
	case "excludeTools":
		r.ExcludeTools, _ = d.strings(v, p)
	case "directTools":
		d.directTools(r, v, p)
	case "toolPrefix":
		r.ToolPrefix = d.toolPrefix(v, p)
	case "searchKeywords":
		d.searchKeywords(r, v, p)
	case "oauth":
		d.oauth(r, v, p)
	case "roots":
		r.Roots = d.roots(v, p)
	case "protocolVersion":
		if pv, ok := d.str(v, p); ok {
			switch {
			case pv == "auto" || pv == "latest" || pv == "legacy":
			case !revisionRE().MatchString(pv):
				d.errorf(v, p, `must be "auto", "latest", "legacy" or a revision such as "2025-11-25", not %q`, pv)
			case !slices.Contains(mcp.SupportedProtocolVersions(), pv):
				d.errorf(v, p, `%q is not a protocol revision Switchboard speaks (it speaks %s): pin one of those, or say "auto"`, pv, strings.Join(mcp.SupportedProtocolVersions(), ", "))
			}
			r.ProtocolVersion = pv
		}
	default:
		if d.policyServer(r, m.key, v, p) {
			return
		}
		if !d.strict && m.key == "enabled" {
			// Other tools' files turn a server off with "enabled": false
			// (mcp-plugin's, opencode's): a server the user turned off
			// there stays off here.
			if on, ok := d.boolean(v, p); ok && !on {
				r.Disabled = true
				return // counted as a field, as "disabled" is: alone, it disables a lower definition
			}
		}
		r.fields--
		if !d.strict && hostFields[m.key] {
			return
		}
		d.unknown(v, strings.TrimSuffix(p, "."+m.key), m.key, serverFields)
	}
}

var revisionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`) })

func (d *decoder) transport(r *rawServer, v *hujson.Value, p, t string) {
	r.typeSet = true
	switch strings.ToLower(t) {
	case "stdio":
		r.Type = TransportStdio
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		r.Type = TransportHTTP
	case "sse":
		r.Type = TransportSSE
	case "socket", "unix":
		r.Type = TransportSocket
	default:
		d.errorf(v, p, `must be "stdio", "http" (or "streamable-http"), "sse" or "socket", not %q`, t)
	}
}

func (d *decoder) reconnect(r *rawServer, v *hujson.Value, path string) {
	obj, ok := d.object(v, path)
	if !ok {
		return
	}
	r.Reconnect = Reconnect{MaxAttempts: 3, BaseDelay: 500 * time.Millisecond}
	for _, m := range d.members(obj, path) {
		p := joinPath(path, m.key)
		switch m.key {
		case "automatic":
			r.Reconnect.Automatic, _ = d.boolean(m.value, p)
		case "maxAttempts":
			if n, ok := d.integer(m.value, p, 1, 5); ok {
				r.Reconnect.MaxAttempts = int(n)
			}
		case "baseDelayMs":
			if n, ok := d.integer(m.value, p, 1, 60_000); ok {
				r.Reconnect.BaseDelay = time.Duration(n) * time.Millisecond
			}
		default:
			// reconnect is ours alone, so it is strict in every file.
			d.errorf(m.value, path, "unknown field %q (known fields: automatic, maxAttempts, baseDelayMs)", m.key)
		}
	}
}

func (d *decoder) directTools(r *rawServer, v *hujson.Value, p string) {
	if lit, ok := v.Value.(hujson.Literal); ok && (lit.Kind() == 't' || lit.Kind() == 'f') {
		r.directTools = &DirectTools{All: lit.Bool()}
		return
	}
	if lit, ok := v.Value.(hujson.Literal); ok && lit.Kind() == '"' && lit.String() == "search" {
		r.directTools = &DirectTools{OnDemand: true}
		return
	}
	if _, ok := v.Value.(*hujson.Array); !ok {
		d.errorf(v, p, `must be true, false, "search" or an array of tool names, not %s`, kindName(v))
		return
	}
	if names, ok := d.strings(v, p); ok {
		r.directTools = &DirectTools{Names: names}
	}
}

func (d *decoder) searchKeywords(r *rawServer, v *hujson.Value, path string) {
	obj, ok := d.object(v, path)
	if !ok {
		return
	}
	r.SearchKeywords = make(map[string][]string, len(obj.Members))
	for _, m := range d.members(obj, path) {
		if words, ok := d.strings(m.value, joinPath(path, m.key)); ok {
			r.SearchKeywords[m.key] = words
		}
	}
}

// checkServer validates a definition as a whole: its transport, the fields
// that belong to it, references, and the rule that credentials are
// references. It reports whether the definition is usable at all.
func (d *decoder) checkServer(r *rawServer, v *hujson.Value, path string) bool {
	if r.Socket != "" || r.Type == TransportSocket {
		return d.checkSocket(r, v, path)
	}
	switch {
	case r.Command != "" && r.URL != "":
		d.errorf(v, path, `has both "command" and "url": a server is either a command (stdio) or a URL (HTTP)`)
		return false
	case r.Command == "" && r.URL == "":
		d.errorf(v, path, `needs "command" (stdio) or "url" (HTTP), e.g. {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}`)
		return false
	}
	if !r.typeSet {
		r.Type = TransportStdio
		if r.URL != "" {
			r.Type, r.TypeInferred = TransportHTTP, true
		}
	}
	if r.Type == TransportStdio {
		if r.Command == "" {
			d.errorf(v, path, `type "stdio" needs "command"`)
			return false
		}
		if r.Headers != nil {
			d.errorf(v, joinPath(path, "headers"), `"headers" belong to HTTP servers; a stdio server takes "env"`)
			return false
		}
		if r.bearer != nil {
			d.errorf(r.bearerAt, joinPath(path, "bearerToken"), `"bearerToken" belongs to HTTP servers; a stdio server takes "env"`)
			return false
		}
		if r.Redirects != "" {
			d.errorf(v, joinPath(path, "redirects"), `"redirects" belongs to HTTP servers: a stdio server makes no HTTP requests`)
			return false
		}
		if r.PerUser != nil {
			d.errorf(r.perUserAt, joinPath(path, "perUser"), `"perUser" belongs to HTTP servers that log in with OAuth: a stdio server has no upstream login`)
			return false
		}
	} else {
		if r.URL == "" {
			d.errorf(v, path, `type %q needs "url"`, r.Type)
			return false
		}
		for _, f := range []struct {
			name string
			set  bool
		}{{"args", r.Args != nil}, {"cwd", r.Cwd != ""}, {"env", r.Env != nil}} {
			if f.set {
				d.errorf(v, joinPath(path, f.name), "%q belongs to stdio servers; an HTTP server takes \"headers\"", f.name)
				return false
			}
		}
		if !d.bearerToken(r, joinPath(path, "bearerToken")) {
			return false
		}
		if !d.checkURL(r.Name, v, joinPath(path, "url"), &r.URL) {
			return false
		}
	}
	for i, a := range append([]string{r.Command, r.Cwd}, r.Args...) {
		if refs, err := parseRefs(a); err == nil && len(refs) > 0 {
			field := "args"
			if i == 0 {
				field = "command"
			} else if i == 1 {
				field = "cwd"
			}
			d.warnf(v, joinPath(path, field), "%s is passed literally: the reference %s is not expanded there (only in env, headers and url)", field, refs[0])
			break
		}
	}
	if !d.checkOAuth(r, v, path) {
		return false
	}
	return d.checkSecrets(r, path, v)
}

// checkSocket checks a server reached over a Unix socket: an absolute path
// ("~/" is the home directory), and none of the fields of the other
// transports.
func (d *decoder) checkSocket(r *rawServer, v *hujson.Value, path string) bool {
	p := joinPath(path, "socket")
	if r.typeSet && r.Type != TransportSocket {
		d.errorf(v, p, `"socket" belongs to servers of type "socket", not %q`, r.Type)
		return false
	}
	r.Type = TransportSocket
	for _, f := range []struct {
		name string
		set  bool
	}{{"command", r.Command != ""}, {"args", r.Args != nil}, {"cwd", r.Cwd != ""}, {"env", r.Env != nil},
		{"url", r.URL != ""}, {"headers", r.Headers != nil}, {"bearerToken", r.bearer != nil}, {"redirects", r.Redirects != ""}, {"perUser", r.PerUser != nil}} {
		if f.set {
			d.errorf(v, joinPath(path, f.name), "%q does not belong to a socket server: the program behind the socket is started, and given its environment, elsewhere", f.name)
			return false
		}
	}
	if r.Socket == "" {
		d.errorf(v, path, `type "socket" needs "socket", the path of a Unix socket`)
		return false
	}
	if !strings.HasPrefix(r.Socket, "~/") && !filepath.IsAbs(r.Socket) { // Load expands "~/"
		d.errorf(v, p, "must be an absolute path (or start with ~/), not %q", r.Socket)
		return false
	}
	return true
}

// bearerToken turns a server's bearerToken (pi-mcp-adapter's field) into
// the Authorization header it stands for: "Bearer " and the token, which
// must be a reference (${VAR}, $env:VAR, ${secret:NAME}, ${cmd:…} or
// !COMMAND), as any credential in a file. It reports whether the
// definition can be used.
func (d *decoder) bearerToken(r *rawServer, p string) bool {
	if r.bearer == nil {
		return true
	}
	for k := range r.Headers {
		if strings.EqualFold(k, "Authorization") {
			d.errorf(r.bearerAt, p, `both "bearerToken" and an Authorization header: keep one`)
			return false
		}
	}
	token := *r.bearer
	switch {
	case strings.HasPrefix(token, "!"):
		// Whole-value forms stay whole behind "Bearer ".
		if strings.Contains(token, "}") {
			d.errorf(r.bearerAt, p, "a !COMMAND in bearerToken cannot contain '}': write the command in a script and name the script")
			return false
		}
		token = "${cmd:" + token[1:] + "}"
	case strings.HasPrefix(token, "$env:"):
		token = "${" + token[len("$env:"):] + "}"
	}
	refs, err := parseRefs(token)
	if err != nil {
		d.errorf(r.bearerAt, p, "%v", err)
		return false
	}
	if len(refs) == 0 {
		d.serverError(r.Name, r.bearerAt, p, "bearerToken must be a reference such as ${API_TOKEN} or ${secret:NAME}, not a literal (the value is not shown); hint: switchboard secret set NAME stores it")
		return true // the server is not used; nothing keeps the literal
	}
	if r.Headers == nil {
		r.Headers = map[string]string{}
	}
	r.Headers["Authorization"] = "Bearer " + token
	return true
}

// checkURL checks a server's URL. It reports whether the URL can be used at
// all; a literal credential in it makes the server unusable, and is
// replaced by Redacted in *raw so that nothing can print it.
func (d *decoder) checkURL(server string, v *hujson.Value, path string, raw *string) bool {
	refs, err := parseRefs(*raw)
	if err != nil {
		d.errorf(v, path, "%v", err)
		return false
	}
	if hasCommand(refs) {
		d.errorf(v, path, "a ${cmd:…} reference is allowed only in env and headers values")
		return false
	}
	sep := strings.Index(*raw, "://")
	if len(refs) > 0 && (sep < 0 || refs[0].start < sep) {
		return true // the scheme comes from a reference: checked when resolved
	}
	// References elsewhere (host, port, user info, path) stand for text that
	// is known only when resolved; a placeholder lets the rest be checked.
	u, err := url.Parse(withPlaceholders(*raw, refs, "0"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.errorf(v, path, "must be an http:// or https:// URL such as https://example.com/mcp")
		return false
	}
	// A password that changes with the placeholder holds a reference.
	password := literalPassword(*raw, refs)
	redacted, params := urlCredentials(*raw, refs, password)
	if password {
		d.serverError(server, v, path, "a password in the URL must be a reference such as ${API_PASSWORD} (the value is not shown)")
	}
	for _, p := range params {
		d.serverError(server, v, path, "the query parameter %q looks like a credential and must be a reference such as ${%s}, not a literal (the value is not shown)", truncate(p, 40), varNameFor(p))
	}
	*raw = redacted
	return true
}

// withPlaceholders replaces each reference in s with p.
func withPlaceholders(s string, refs []ref, p string) string {
	var b strings.Builder
	last := 0
	for _, r := range refs {
		b.WriteString(s[last:r.start])
		b.WriteString(p)
		last = r.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// serverError records a problem that makes one server unusable but leaves
// the others alone: it cannot disable or enable anything by mistake.
func (d *decoder) serverError(server string, v *hujson.Value, path, format string, args ...any) {
	d.add(SeverityError, v, path, server, format, args...)
}

func (d *decoder) checkSecrets(r *rawServer, path string, v *hujson.Value) bool {
	ok := true
	check := func(field string, m map[string]string, credential func(string) bool, example func(string) string) {
		values := memberValues(v, field)
		for _, k := range sortedKeys(m) {
			p := joinPath(joinPath(path, field), k)
			at := values[k]
			if at == nil {
				at = v
			}
			refs, err := parseRefs(m[k])
			if err != nil {
				d.errorf(at, p, "%v", err)
				ok = false
				continue
			}
			if hasCommand(refs) && !d.commandRefAllowed() {
				d.serverError(r.Name, at, p, "a ${cmd:…} reference runs a command, and is allowed only in your own user-global files, not in a project's or another host's (hint: move this server's definition to %s)", "~/.config/switchboard/config.json")
				ok = false
				continue
			}
			if len(refs) == 0 && m[k] != "" && credential(k) {
				m[k] = Redacted
				d.serverError(r.Name, at, p, "%s looks like a credential and must be a reference such as %s, not a literal (the value is not shown); hint: %s", k, example(k), d.literalHint(k, example(k)))
			}
		}
	}
	check("env", r.Env, credentialKey, func(k string) string { return "${" + varNameFor(k) + "}" })
	check("headers", r.Headers, credentialHeader, headerExample)
	return ok
}

// literalHint says how to replace a literal credential: an import moves it
// into the credential store for you; in a file you edit, you store it and
// write the reference to it.
func (d *decoder) literalHint(key, example string) string {
	if d.src.Kind == KindImport {
		return fmt.Sprintf("switchboard import --from %s --write --move-secrets moves it into the credential store", d.src.Host)
	}
	name := varNameFor(key)
	ref := strings.Replace(example, "${", "${"+secretPrefix, 1)
	if strings.EqualFold(key, "authorization") || strings.EqualFold(key, "proxy-authorization") {
		name = "API_TOKEN"
	}
	return fmt.Sprintf("store it with switchboard secret set %s and write %s instead", name, ref)
}

// memberValues maps the keys of the object in member field of the server
// object v to their values (the last one of a duplicate, which counts), for
// positions. One pass: a Find per key is quadratic in a file with many.
func memberValues(v *hujson.Value, field string) map[string]*hujson.Value {
	server, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil
	}
	var obj *hujson.Object
	for i := range server.Members {
		if server.Members[i].Name.Value.(hujson.Literal).String() == field {
			obj, _ = server.Members[i].Value.Value.(*hujson.Object)
		}
	}
	if obj == nil {
		return nil
	}
	out := make(map[string]*hujson.Value, len(obj.Members))
	for i := range obj.Members {
		out[obj.Members[i].Name.Value.(hujson.Literal).String()] = &obj.Members[i].Value
	}
	return out
}
