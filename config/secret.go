package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/switchboard-mcp/switchboard/credstore"
)

// Secret is a value resolved from the environment or the credential store. It prints as [redacted]
// in every fmt verb and in JSON, so it cannot reach a log, an error or a
// result by accident; Reveal returns the value for the one place that needs
// it (a child's environment, a request header). The zero value is empty.
//
// The value sits behind a pointer: fmt cannot call Format on a Secret held
// in another type's unexported field and prints such fields by reflection,
// which then shows an address instead of the value.
type Secret struct{ v *string }

func newSecret(v string) Secret { return Secret{&v} }

// Reveal returns the value.
func (s Secret) Reveal() string {
	if s.v == nil {
		return ""
	}
	return *s.v
}

// String returns "[redacted]".
func (Secret) String() string { return "[redacted]" }

// GoString returns "[redacted]".
func (Secret) GoString() string { return "[redacted]" }

// Format prints "[redacted]" for every verb.
func (Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte("[redacted]")) }

// MarshalJSON returns "[redacted]".
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

// MarshalText returns "[redacted]".
func (Secret) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// Resolved holds the values of a server's references, resolved at connect
// time. Values that held no reference are wrapped too: they are all handled
// alike.
type Resolved struct {
	URL     Secret
	Env     map[string]Secret
	Headers map[string]Secret
	// Parts holds every value a reference resolved to, on its own: text
	// that came back from the server (an error, its stderr) may show one
	// without the rest of the value it was part of ("Bearer ${TOKEN}").
	Parts []Secret

	OAuthClientSecret Secret // oauth.clientSecret
	OAuthClientKey    Secret // oauth.clientKey
}

// Lookup is where references find their values.
type Lookup struct {
	// Env returns an environment variable, for ${VAR} and $env:VAR;
	// typically os.LookupEnv. Nil: no variable is set.
	Env func(name string) (string, bool)
	// Secrets is the credential store, for ${secret:NAME}: the value of
	// credstore.SecretKey(NAME). Nil: there is none, and every secret
	// reference is an error that says so.
	Secrets credstore.Store
	// Commands runs the command of a ${cmd:…} reference and returns what
	// it printed (see RunCommand). Nil: such a reference is an error.
	Commands func(argv []string) ([]byte, error)
}

// ReferenceError reports a reference that could not be resolved. It names the
// file, the JSON path and the variable or secret, never a value. Server and
// File are empty for a reference in the settings (settings.embeddings).
type ReferenceError struct {
	Server string
	File   string
	Path   string
	Var    string
	// Secret is set for a ${secret:NAME} reference, whose name is Var. Store
	// names the credential store it was looked for in ("keychain",
	// "file"), or is empty when there was none.
	Secret bool
	Store  string
}

func (e *ReferenceError) Error() string {
	var where string
	if e.Server != "" {
		where = fmt.Sprintf("server %q: ", e.Server)
	}
	if e.File != "" {
		where += e.File + ": "
	}
	switch {
	case e.Secret && e.Store == "":
		return fmt.Sprintf("%s%s: secret %s: there is no credential store to read it from", where, e.Path, e.Var)
	case e.Secret:
		return fmt.Sprintf("%s%s: secret %s is not in the credential store (%s) or is empty (hint: switchboard secret set %s)",
			where, e.Path, e.Var, e.Store, e.Var)
	}
	return fmt.Sprintf("%s%s: environment variable %s is not set or empty (hint: export %s before starting switchboard)",
		where, e.Path, e.Var, e.Var)
}

// ErrReference is matched by every *ReferenceError.
var ErrReference = errors.New("unresolved reference")

// Is makes errors.Is(err, ErrReference) true.
func (e *ReferenceError) Is(target error) bool { return target == ErrReference }

// Resolve expands the references in the server's env, headers and URL:
// ${VAR} and $env:VAR from lookup.Env, ${secret:NAME} from lookup.Secrets.
// Expansion is not recursive: a value that itself contains ${…} is used as
// it is. A reference to a variable or secret that is unset or empty is an
// error, unless it gives a default (${VAR:-default}); so is a credential
// store that cannot be read.
func (s *Server) Resolve(lookup Lookup) (*Resolved, error) {
	r := &Resolved{}
	expand := func(path, value string) (Secret, error) {
		v, err := expandRefs(value, lookup, &r.Parts)
		var re *ReferenceError
		if errors.As(err, &re) {
			re.Server, re.File, re.Path = s.Name, s.Source.Path, path
			return Secret{}, re
		}
		if err != nil {
			return Secret{}, fmt.Errorf("server %q: %s: %s: %w", s.Name, s.Source.Path, path, err)
		}
		return newSecret(v), nil
	}
	var err error
	if s.URL != "" {
		if r.URL, err = expand(joinPath(s.Path, "url"), s.URL); err != nil {
			return nil, err
		}
		if u, perr := url.Parse(r.URL.Reveal()); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("server %q: %s: %s: after its references are resolved, the URL is not an http:// or https:// URL (the value is not shown)", s.Name, s.Source.Path, joinPath(s.Path, "url"))
		}
	}
	if r.Env, err = expandMap(s.Env, joinPath(s.Path, "env"), expand); err != nil {
		return nil, err
	}
	if r.Headers, err = expandMap(s.Headers, joinPath(s.Path, "headers"), expand); err != nil {
		return nil, err
	}
	if err := s.resolveOAuth(r, expand); err != nil {
		return nil, err
	}
	return r, nil
}

func expandMap(m map[string]string, path string, expand func(string, string) (Secret, error)) (map[string]Secret, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]Secret, len(m))
	for _, k := range sortedKeys(m) {
		v, err := expand(joinPath(path, k), m[k])
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// ref is one reference inside a value.
type ref struct {
	start, end int // byte range in the value
	name       string
	def        string
	hasDef     bool
	secret     bool // ${secret:NAME}: name is the secret's
	cmd        bool // ${cmd:COMMAND ARGS}: name is the command's text
}

// String returns the reference as it is written.
func (r ref) String() string {
	switch {
	case r.cmd:
		return "${" + cmdPrefix + r.name + "}"
	case r.secret && r.hasDef:
		return "${" + secretPrefix + r.name + ":-" + r.def + "}"
	case r.secret:
		return "${" + secretPrefix + r.name + "}"
	case r.hasDef:
		return "${" + r.name + ":-" + r.def + "}"
	}
	return "${" + r.name + "}"
}

// secretPrefix starts the body of a reference to a stored secret.
const secretPrefix = "secret:"

var varNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// MaxSecretName bounds a secret's name, which becomes part of a credential
// store key.
const MaxSecretName = 128

// ValidSecretName reports whether name can be a secret's, as in
// ${secret:NAME}: 1 to 128 letters, digits and '_', not starting with a
// digit.
func ValidSecretName(name string) bool {
	return len(name) <= MaxSecretName && varNameRE().MatchString(name)
}

// parseRefs finds the references in a value: ${VAR}, ${VAR:-default},
// ${secret:NAME}, ${secret:NAME:-default} or ${cmd:COMMAND ARGS}
// anywhere, or $env:VAR or !COMMAND ARGS as the whole value.
func parseRefs(value string) ([]ref, error) {
	if cmd, ok := strings.CutPrefix(value, "!"); ok {
		// "!COMMAND ARGS" as the whole value is ${cmd:COMMAND ARGS}, as
		// pi-mcp-adapter writes it: the same rules hold.
		if _, err := splitCommand(cmd); err != nil {
			return nil, fmt.Errorf("invalid reference: !COMMAND ARGS (the same as ${cmd:COMMAND ARGS}): %v", err)
		}
		return []ref{{start: 0, end: len(value), name: cmd, cmd: true}}, nil
	}
	if name, ok := strings.CutPrefix(value, "$env:"); ok {
		if !varNameRE().MatchString(name) {
			return nil, errors.New("invalid reference: $env:NAME takes a variable name of letters, digits and '_' (the value is not shown)")
		}
		return []ref{{start: 0, end: len(value), name: name}}, nil
	}
	var refs []ref
	for i := 0; i < len(value); {
		j := strings.Index(value[i:], "${")
		if j < 0 {
			break
		}
		start := i + j
		k := strings.IndexByte(value[start:], '}')
		if k < 0 {
			return nil, fmt.Errorf("unterminated reference at byte %d: write ${NAME} or ${secret:NAME}", start+1)
		}
		body := value[start+2 : start+k]
		r := ref{start: start, end: start + k + 1, name: body}
		if cmd, ok := strings.CutPrefix(body, cmdPrefix); ok {
			if _, err := splitCommand(cmd); err != nil {
				return nil, fmt.Errorf("invalid reference at byte %d: ${cmd:COMMAND ARGS}: %v", start+1, err)
			}
			r.name, r.cmd = cmd, true
			refs = append(refs, r)
			i = r.end
			continue
		}
		if n, def, ok := strings.Cut(body, ":-"); ok {
			r.name, r.def, r.hasDef = n, def, true
		}
		if n, ok := strings.CutPrefix(r.name, secretPrefix); ok {
			r.name, r.secret = n, true
			if !ValidSecretName(r.name) {
				return nil, fmt.Errorf("invalid reference at byte %d: ${secret:NAME} takes a secret name of 1 to %d letters, digits and '_'", start+1, MaxSecretName)
			}
		} else if !varNameRE().MatchString(r.name) {
			return nil, fmt.Errorf("invalid reference at byte %d: ${NAME} takes a variable name of letters, digits and '_', and ${secret:NAME} a stored secret's", start+1)
		}
		refs = append(refs, r)
		i = r.end
	}
	return refs, nil
}

// expandRefs replaces the references in value. A variable or secret that
// is unset or empty and has no default is a *ReferenceError naming it,
// without a place: the caller knows that. Each value a reference resolved
// to is appended to *parts.
func expandRefs(value string, lookup Lookup, parts *[]Secret) (string, error) {
	refs, err := parseRefs(value)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	last := 0
	for _, r := range refs {
		b.WriteString(value[last:r.start])
		v, err := lookup.value(r)
		if err != nil {
			return "", err
		}
		if v == "" && r.cmd {
			return "", fmt.Errorf("the command of %s printed nothing", truncate(r.String(), 60))
		}
		if v == "" {
			if !r.hasDef {
				re := &ReferenceError{Var: r.name, Secret: r.secret}
				if r.secret && lookup.Secrets != nil {
					re.Store = lookup.Secrets.Name()
				}
				return "", re
			}
			v = r.def
		} else {
			*parts = append(*parts, newSecret(v))
		}
		b.WriteString(v)
		last = r.end
	}
	b.WriteString(value[last:])
	return b.String(), nil
}

// value returns what a reference names, "" when it is unset. Only a store
// that cannot be read is an error.
func (l Lookup) value(r ref) (string, error) {
	if r.cmd {
		return l.runRef(r)
	}
	if !r.secret {
		if l.Env == nil {
			return "", nil
		}
		v, _ := l.Env(r.name)
		return v, nil
	}
	if l.Secrets == nil {
		return "", nil
	}
	v, _, err := l.Secrets.Get(credstore.SecretKey(r.name))
	if err != nil {
		return "", fmt.Errorf("secret %s: %w", r.name, err)
	}
	return string(v), nil
}

// References returns the names of the environment variables a server's
// definition refers to, sorted.
func (s *Server) References() []string { return s.refNames(false) }

// SecretReferences returns the names of the stored secrets a server's
// definition refers to (${secret:NAME}), sorted.
func (s *Server) SecretReferences() []string { return s.refNames(true) }

func (s *Server) refNames(secret bool) []string {
	var names []string
	add := func(v string) {
		refs, _ := parseRefs(v)
		for _, r := range refs {
			if r.secret == secret && !r.cmd {
				names = append(names, r.name)
			}
		}
	}
	add(s.URL)
	for _, v := range s.Env {
		add(v)
	}
	for _, v := range s.Headers {
		add(v)
	}
	sort.Strings(names)
	return compactStrings(names)
}

// Reference is one reference in a server's definition.
type Reference struct {
	Path    string // the JSON path of the value that holds it, such as mcpServers.github.env.TOKEN
	Name    string // the variable's, or the secret's, name
	Secret  bool   // ${secret:NAME}
	Default bool   // it gives a default: unset is not an error
}

// ReferenceList returns every reference in the server's URL, env and
// headers, in that order (env and headers by key).
func (s *Server) ReferenceList() []Reference {
	var out []Reference
	add := func(path, v string) {
		refs, _ := parseRefs(v)
		for _, r := range refs {
			out = append(out, Reference{Path: path, Name: r.name, Secret: r.secret, Default: r.hasDef})
		}
	}
	add(s.Path+".url", s.URL)
	for _, k := range sortedKeys(s.Env) {
		add(s.Path+".env."+k, s.Env[k])
	}
	for _, k := range sortedKeys(s.Headers) {
		add(s.Path+".headers."+k, s.Headers[k])
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Redacted replaces, in a definition, a literal value that looks like a
// credential. Such a definition is refused (Server.Err says why), so the
// value is never needed, and with it gone nothing that prints a definition
// (config show, status, an error) can show the credential.
const Redacted = "[redacted]"

// credentialWords are parts of an environment variable's name that say it
// holds a credential wherever they appear (GITHUB_TOKEN, CLIENT_SECRET,
// DB_PASSWORD, OPENAI_API_KEY), and credentialSuffixes parts that do at its
// end (PGPASS, STRIPE_KEY, SMTP_PASS): KEY alone in the middle of a name
// (KEYBOARD_LAYOUT, KEY_FILE) says nothing.
var (
	credentialWords    = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "APIKEY", "CREDENTIAL", "OAUTH"}
	credentialSuffixes = []string{"_PASS", "_KEY"}
)

// credentialKey reports whether an environment variable (or a header, or a
// URL query parameter) of this name looks like it holds a credential. Case
// and '-' versus '_' do not matter.
func credentialKey(key string) bool {
	k := strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
	for _, w := range credentialWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	for _, suffix := range credentialSuffixes {
		if k == suffix[1:] || strings.HasSuffix(k, suffix) {
			return true
		}
	}
	return false
}

// credentialHeader reports whether a header carries credentials: the
// standard ones, and the API-key style headers of many services (X-Api-Key,
// X-Goog-Api-Key, Private-Token, X-Auth-Token, Ocp-Apim-Subscription-Key).
func credentialHeader(name string) bool {
	switch strings.ToLower(name) {
	case "authorization", "proxy-authorization", "cookie":
		return true
	}
	return credentialKey(name)
}

// headerExample is the reference to suggest in place of a literal header.
func headerExample(name string) string {
	switch strings.ToLower(name) {
	case "authorization", "proxy-authorization":
		return `"Bearer ${API_TOKEN}"`
	}
	return "${" + varNameFor(name) + "}"
}

// varNameFor turns a name (an env key, a header) into a variable name for a
// suggested reference: X-Api-Key → X_API_KEY.
func varNameFor(name string) string {
	v := strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	if !varNameRE().MatchString(v) {
		return "TOKEN"
	}
	return v
}

// urlCredentials finds the literal credentials in a URL as written in a
// definition: the password of the user info, when password says url.Parse
// found a literal one, and the values of query parameters named like
// credentials (?api_key=…, ?token=…). It returns the URL with each of them
// replaced by Redacted, and the names of those parameters. A value that holds a reference is no literal, and
// separators inside references (${HOST:-a/b}) do not count. Should the
// password not be found where url.Parse saw it, the whole URL is redacted:
// a credential is never left in place.
func urlCredentials(raw string, refs []ref, password bool) (redacted string, params []string) {
	spans, ok := urlCredentialSpans(raw, refs, password)
	if !ok {
		return Redacted, nil
	}
	var b strings.Builder
	last := 0
	for _, s := range spans {
		b.WriteString(raw[last:s.start])
		b.WriteString(Redacted)
		last = s.end
		if s.param != "" {
			params = append(params, s.param)
		}
	}
	b.WriteString(raw[last:])
	return b.String(), params
}

// credSpan is where a URL holds a literal credential: the password of its
// user info (param is empty), or the value of the query parameter param.
type credSpan struct {
	start, end int
	param      string
}

// urlCredentialSpans finds the literal credentials of urlCredentials, in
// order. ok is false when the password url.Parse saw cannot be found.
func urlCredentialSpans(raw string, refs []ref, password bool) (spans []credSpan, ok bool) {
	inRef := func(from, to int) bool {
		for _, r := range refs {
			if r.start < to && r.end > from {
				return true
			}
		}
		return false
	}
	// index returns the first byte of raw[from:to] that is c and lies
	// outside every reference, or -1; last the last one.
	index := func(from, to int, c byte, last bool) int {
		found := -1
		for i := from; i < to; i++ {
			if raw[i] == c && !inRef(i, i+1) {
				if found = i; !last {
					break
				}
			}
		}
		return found
	}
	end := len(raw)
	if i := index(0, end, '#', false); i >= 0 {
		end = i
	}
	q := index(0, end, '?', false)
	if password {
		authStart := strings.Index(raw, "://") + 3
		authEnd := end
		if q >= 0 {
			authEnd = q
		}
		if i := index(authStart, authEnd, '/', false); i >= 0 {
			authEnd = i
		}
		at := index(authStart, authEnd, '@', true)
		colon := -1
		if at >= 0 {
			colon = index(authStart, at, ':', false)
		}
		if colon < 0 || inRef(colon+1, at) {
			return nil, false
		}
		spans = append(spans, credSpan{start: colon + 1, end: at})
	}
	for from := q + 1; q >= 0 && from < end; {
		amp := index(from, end, '&', false)
		if amp < 0 {
			amp = end
		}
		if eq := index(from, amp, '=', false); eq >= 0 && eq+1 < amp && !inRef(from, amp) {
			key, err := url.QueryUnescape(raw[from:eq])
			if err != nil {
				key = raw[from:eq]
			}
			if credentialKey(key) {
				spans = append(spans, credSpan{start: eq + 1, end: amp, param: key})
			}
		}
		from = amp + 1
	}
	return spans, true
}

// literalPassword reports whether a URL as written, whose references are
// refs, holds a password in its user info that is a literal: one that
// does not change with what the references stand for.
func literalPassword(raw string, refs []ref) bool {
	u, err := url.Parse(withPlaceholders(raw, refs, "0"))
	if err != nil || u.User == nil {
		return false
	}
	pw, has := u.User.Password()
	var pw1 string
	if other, err := url.Parse(withPlaceholders(raw, refs, "1")); err == nil {
		pw1, _ = other.User.Password()
	}
	return has && pw == pw1
}
