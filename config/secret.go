package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// Secret is a value resolved from the environment. It prints as [redacted]
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
}

// ReferenceError reports a reference that could not be resolved. It names the
// file, the JSON path and the variable, never a value. Server and File are
// empty for a reference in the settings (settings.embeddings).
type ReferenceError struct {
	Server string
	File   string
	Path   string
	Var    string
}

func (e *ReferenceError) Error() string {
	var where string
	if e.Server != "" {
		where = fmt.Sprintf("server %q: ", e.Server)
	}
	if e.File != "" {
		where += e.File + ": "
	}
	return fmt.Sprintf("%s%s: environment variable %s is not set or empty (hint: export %s before starting switchboard)",
		where, e.Path, e.Var, e.Var)
}

// ErrReference is matched by every *ReferenceError.
var ErrReference = errors.New("unresolved reference")

// Is makes errors.Is(err, ErrReference) true.
func (e *ReferenceError) Is(target error) bool { return target == ErrReference }

// Resolve expands the references in the server's env, headers and URL with
// lookup, typically os.LookupEnv. Expansion is not recursive: a value that
// itself contains ${…} is used as it is. A reference to a variable that is
// unset or empty is an error, unless it gives a default (${VAR:-default}).
func (s *Server) Resolve(lookup func(string) (string, bool)) (*Resolved, error) {
	r := &Resolved{}
	expand := func(path, value string) (Secret, error) {
		v, missing, err := expandRefs(value, lookup)
		if err != nil {
			return Secret{}, fmt.Errorf("server %q: %s: %s: %w", s.Name, s.Source.Path, path, err)
		}
		if missing != "" {
			return Secret{}, &ReferenceError{Server: s.Name, File: s.Source.Path, Path: path, Var: missing}
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
}

var varNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseRefs finds the references in a value: ${VAR} or ${VAR:-default}
// anywhere, or $env:VAR as the whole value.
func parseRefs(value string) ([]ref, error) {
	if name, ok := strings.CutPrefix(value, "$env:"); ok {
		if !varNameRE.MatchString(name) {
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
			return nil, fmt.Errorf("unterminated reference at byte %d: write ${NAME}", start+1)
		}
		body := value[start+2 : start+k]
		r := ref{start: start, end: start + k + 1, name: body}
		if n, def, ok := strings.Cut(body, ":-"); ok {
			r.name, r.def, r.hasDef = n, def, true
		}
		if !varNameRE.MatchString(r.name) {
			return nil, fmt.Errorf("invalid reference at byte %d: ${NAME} takes a variable name of letters, digits and '_'", start+1)
		}
		refs = append(refs, r)
		i = r.end
	}
	return refs, nil
}

// expandRefs replaces the references in value. It returns the name of the
// first variable that is unset or empty and has no default.
func expandRefs(value string, lookup func(string) (string, bool)) (out, missing string, err error) {
	refs, err := parseRefs(value)
	if err != nil {
		return "", "", err
	}
	var b strings.Builder
	last := 0
	for _, r := range refs {
		b.WriteString(value[last:r.start])
		v, ok := lookup(r.name)
		if !ok || v == "" {
			if !r.hasDef {
				return "", r.name, nil
			}
			v = r.def
		}
		b.WriteString(v)
		last = r.end
	}
	b.WriteString(value[last:])
	return b.String(), "", nil
}

// References returns the names of the environment variables a server's
// definition refers to, sorted.
func (s *Server) References() []string {
	var names []string
	add := func(v string) {
		refs, _ := parseRefs(v)
		for _, r := range refs {
			names = append(names, r.name)
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

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

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
	if !varNameRE.MatchString(v) {
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
	type span struct{ start, end int }
	var spans []span
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
			return Redacted, nil
		}
		spans = append(spans, span{colon + 1, at})
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
				spans = append(spans, span{eq + 1, amp})
				params = append(params, key)
			}
		}
		from = amp + 1
	}
	var b strings.Builder
	last := 0
	for _, s := range spans {
		b.WriteString(raw[last:s.start])
		b.WriteString(Redacted)
		last = s.end
	}
	b.WriteString(raw[last:])
	return b.String(), params
}
