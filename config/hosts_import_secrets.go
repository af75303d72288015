package config

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/switchboard-mcp/switchboard/config/hosts"
)

// Moving secrets: most hosts' files hold tokens as literals (Claude
// Desktop's and Codex's usual setup), which our validation refuses. With
// ImportOptions.MoveSecrets an import replaces each such literal, in a
// host's entry normalized to our schema and before it is validated, with a
// reference to a stored secret; the caller stores the values and writes
// the definitions. What counts as a literal credential is what
// checkSecrets and checkURL refuse, found by the same functions.

// A MovedSecret is a literal credential that an import replaced with the
// reference ${secret:NAME}. Name is SERVER_FIELD in capitals, '-' and
// other characters a name cannot hold made '_': GITHUB_GITHUB_TOKEN for the
// env GITHUB_TOKEN of server github, FIGMA_AUTHORIZATION for its
// Authorization header (whose scheme, "Bearer ", stays in the header),
// API_URL_PASSWORD and API_KEY for the password and ?key= of a URL. The
// same entry always gives the same name.
type MovedSecret struct {
	Server string // the server's name
	Path   string // where the host's file holds it: mcpServers.github.env.GITHUB_TOKEN
	Name   string // the secret's name, as the reference writes it
	Value  Secret
}

// moveSecrets replaces the literal credentials of e's env, headers and URL.
func (imp *Import) moveSecrets(e *hosts.Entry) {
	// move records the value of field (a path inside the definition),
	// named after what, and returns the reference to write instead.
	move := func(field, what, value string) string {
		name := secretNameFor(e.Name, what)
		imp.Moved = append(imp.Moved, MovedSecret{Server: e.Name, Path: e.HostPath(field), Name: name, Value: newSecret(value)})
		return "${" + secretPrefix + name + "}"
	}
	if env, ok := e.Def["env"].(map[string]any); ok {
		for _, k := range sortedKeys(env) {
			if v, ok := env[k].(string); ok && isLiteral(v) && credentialKey(k) {
				env[k] = move(joinPath("env", k), k, v)
			}
		}
	}
	if headers, ok := e.Def["headers"].(map[string]any); ok {
		for _, k := range sortedKeys(headers) {
			v, ok := headers[k].(string)
			if !ok || !isLiteral(v) || !credentialHeader(k) {
				continue
			}
			if scheme, token, ok := authScheme(k, v); ok {
				headers[k] = scheme + " " + move(joinPath("headers", k), k, token)
			} else {
				headers[k] = move(joinPath("headers", k), k, v)
			}
		}
	}
	if u, ok := e.Def["url"].(string); ok {
		e.Def["url"] = moveURLSecrets(u, move)
	}
}

// moveURLSecrets replaces the literal password and credential parameters
// of a URL. A URL it cannot take apart is left for validation to refuse.
func moveURLSecrets(raw string, move func(field, what, value string) string) string {
	refs, err := parseRefs(raw)
	if err != nil || strings.Contains(raw, "://") && len(refs) > 0 && refs[0].start < strings.Index(raw, "://") {
		return raw
	}
	spans, ok := urlCredentialSpans(raw, refs, literalPassword(raw, refs))
	if !ok {
		return raw
	}
	var b strings.Builder
	last := 0
	for _, s := range spans {
		b.WriteString(raw[last:s.start])
		what := s.param
		if what == "" {
			what = "URL_PASSWORD"
		}
		b.WriteString(move("url", what, raw[s.start:s.end]))
		last = s.end
	}
	b.WriteString(raw[last:])
	return b.String()
}

// isLiteral reports whether a value is a non-empty literal: no reference,
// and no reference syntax validation would refuse.
func isLiteral(v string) bool {
	refs, err := parseRefs(v)
	return err == nil && len(refs) == 0 && v != ""
}

var schemeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_-]*) +(\S+)$`) })

// authScheme splits an Authorization header's "Bearer TOKEN" into its
// scheme and its credential.
func authScheme(header, value string) (scheme, token string, ok bool) {
	if !strings.EqualFold(header, "authorization") && !strings.EqualFold(header, "proxy-authorization") {
		return "", "", false
	}
	m := schemeRE().FindStringSubmatch(value)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

var nameUnsafeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Z0-9_]+`) })

// secretNameFor names the secret of server that what (an env name, a
// header, URL_PASSWORD or a query parameter) holds.
func secretNameFor(server, what string) string {
	name := nameUnsafeRE().ReplaceAllString(strings.ToUpper(server+"_"+what), "_")
	if name[0] >= '0' && name[0] <= '9' {
		name = "_" + name
	}
	return truncateName(name, MaxSecretName)
}

func truncateName(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// keepMoved keeps the moved secrets of the servers that were imported.
func (imp *Import) keepMoved() {
	kept := map[string]bool{}
	for _, s := range imp.Servers {
		kept[s.Name] = true
	}
	out := imp.Moved[:0]
	for _, m := range imp.Moved {
		if kept[m.Server] {
			out = append(out, m)
		}
	}
	imp.Moved = out
	sort.SliceStable(imp.Moved, func(i, j int) bool { return imp.Moved[i].Server < imp.Moved[j].Server })
}

// MovedOf returns the secrets moved out of server's definition.
func (imp *Import) MovedOf(server string) []MovedSecret {
	var out []MovedSecret
	for _, m := range imp.Moved {
		if m.Server == server {
			out = append(out, m)
		}
	}
	return out
}

// RenameSecret makes def refer to secret to where it referred to from,
// in its env, headers and URL. The maps are copied, not changed: they may
// be a Server's.
func (def *Definition) RenameSecret(from, to string) {
	if from == to {
		return
	}
	old, repl := "${"+secretPrefix+from+"}", "${"+secretPrefix+to+"}"
	rename := func(m map[string]string) map[string]string {
		if m == nil {
			return nil
		}
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[k] = strings.ReplaceAll(v, old, repl)
		}
		return out
	}
	def.Env = rename(def.Env)
	def.Headers = rename(def.Headers)
	def.URL = strings.ReplaceAll(def.URL, old, repl)
}

// String describes a moved secret without its value.
func (m MovedSecret) String() string {
	return fmt.Sprintf("%s (server %s, from %s)", m.Name, m.Server, m.Path)
}
