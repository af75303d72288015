package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// Bounds on what a registry may answer.
const (
	maxBody    = 8 << 20 // one answer
	maxEntries = 1000    // entries in one page
	maxString  = 4096    // any one string the CLI may show or write
	maxInputs  = 200     // arguments, variables or headers of one package or remote
)

// ErrGarbage is wrapped by errors for answers that are not registry
// answers, or that break the server.json format.
var ErrGarbage = errors.New("not a registry answer")

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`) })

// ValidName reports whether name is written as a registry name:
// reverse-DNS namespace, one slash, server name.
func ValidName(name string) bool {
	return len(name) >= 3 && len(name) <= 200 && nameRE().MatchString(name)
}

// list is the shape of /v0.1/servers and /v0.1/servers/NAME/versions.
type list struct {
	Servers  []json.RawMessage `json:"servers"`
	Metadata struct {
		NextCursor string `json:"nextCursor,omitempty"`
		Count      int    `json:"count"`
	} `json:"metadata"`
}

// decodeList decodes a list answer. Entries that break the format are
// left out and counted in skipped; an answer that is not a list at all is
// an error wrapping ErrGarbage.
func decodeList(body []byte) (entries []Entry, next string, skipped int, err error) {
	var l list
	if err := strictJSON(body, &l); err != nil {
		return nil, "", 0, err
	}
	if l.Servers == nil {
		return nil, "", 0, fmt.Errorf("%w: no servers list", ErrGarbage)
	}
	if len(l.Servers) > maxEntries {
		return nil, "", 0, fmt.Errorf("%w: %d entries in one page, over %d", ErrGarbage, len(l.Servers), maxEntries)
	}
	if len(l.Metadata.NextCursor) > maxString || !printable(l.Metadata.NextCursor) {
		return nil, "", 0, fmt.Errorf("%w: the next cursor is not printable text of at most %d bytes", ErrGarbage, maxString)
	}
	for _, raw := range l.Servers {
		var e Entry
		if err := json.Unmarshal(raw, &e); err != nil || e.Check() != nil {
			skipped++
			continue
		}
		entries = append(entries, e)
	}
	return entries, l.Metadata.NextCursor, skipped, nil
}

// decodeEntry decodes the answer for one version of a server.
func decodeEntry(body []byte) (*Entry, error) {
	var e Entry
	if err := strictJSON(body, &e); err != nil {
		return nil, err
	}
	if err := e.Check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrGarbage, err)
	}
	return &e, nil
}

func strictJSON(body []byte, v any) error {
	if len(body) > maxBody {
		return fmt.Errorf("%w: over %d MiB", ErrGarbage, maxBody>>20)
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return fmt.Errorf("%w: not a JSON object", ErrGarbage)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %v", ErrGarbage, err)
	}
	return nil
}

// Check reports the first way the entry breaks the server.json format
// that Switchboard relies on: its name, its version, the bounds of its
// strings. Packages and remotes are checked when one is chosen (Plan).
func (e *Entry) Check() error {
	s := &e.Server
	switch {
	case !ValidName(s.Name):
		return fmt.Errorf("invalid server name %q", clip(s.Name))
	case s.Version == "" || len(s.Version) > 255 || !token(s.Version):
		return fmt.Errorf("server %s: invalid version %q", s.Name, clip(s.Version))
	case len(s.Description) > maxString || len(s.Title) > maxString || len(s.WebsiteURL) > maxString:
		return fmt.Errorf("server %s: a description, title or website over %d bytes", s.Name, maxString)
	case len(s.Packages) > maxInputs || len(s.Remotes) > maxInputs:
		return fmt.Errorf("server %s: over %d packages or remotes", s.Name, maxInputs)
	}
	if o := e.Meta.Official; o != nil && !token(o.Status) && o.Status != "" {
		return fmt.Errorf("server %s: invalid status %q", s.Name, clip(o.Status))
	}
	return nil
}

// token reports whether s is printable, without spaces.
func token(s string) bool {
	for _, r := range s {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// printable reports whether s has no control characters.
func printable(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// ExactVersion reports whether v names one version: not empty, not
// "latest", not a range ("^1.2", "~1", ">=1", "1.x", "1.*") and no spaces.
func ExactVersion(v string) bool {
	if v == "" || strings.EqualFold(v, "latest") || !token(v) || len(v) > 255 {
		return false
	}
	if strings.ContainsAny(v, "^~<>=*|,") {
		return false
	}
	for _, part := range strings.Split(v, ".") {
		if part == "x" || part == "X" {
			return false
		}
	}
	return true
}

// identifierRE is compiled on first use: every command links this
// package, few check a registry entry.
var identifierRE = sync.OnceValue(func() map[string]*regexp.Regexp {
	return map[string]*regexp.Regexp{
		TypeNPM:   regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`),
		TypePyPI:  regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`),
		TypeNuGet: regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`),
		TypeOCI:   regexp.MustCompile(`^[a-z0-9][a-z0-9._/:@-]*$`),
	}
})

// checkPackage reports why p cannot be installed as written: an unknown
// type, an identifier that is not a package name (one starting with "-"
// would be taken as an option by the runtime), a version that is not
// exact, a transport other than stdio.
func checkPackage(p *Package) error {
	id := p.Identifier
	switch p.RegistryType {
	case TypeNPM, TypePyPI, TypeNuGet, TypeOCI:
		if len(id) > 214 || !identifierRE()[p.RegistryType].MatchString(id) {
			return fmt.Errorf("invalid %s package identifier %q", p.RegistryType, clip(id))
		}
	case TypeMCPB:
		u, err := url.Parse(id)
		if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
			return fmt.Errorf("invalid mcpb package identifier %q: it must be the bundle's https URL", clip(id))
		}
		if !sha256RE().MatchString(p.FileSHA256) {
			return fmt.Errorf("the mcpb package %s has no valid fileSha256, so the bundle cannot be checked: refused", clip(id))
		}
	default:
		return fmt.Errorf("unknown package registry type %q (known: npm, pypi, nuget, oci, mcpb)", clip(p.RegistryType))
	}
	if p.Version != "" && !ExactVersion(p.Version) {
		return fmt.Errorf("the %s package %s has version %q, which is not one exact version", p.RegistryType, id, clip(p.Version))
	}
	if p.Version == "" && p.RegistryType != TypeOCI && p.RegistryType != TypeMCPB {
		return fmt.Errorf("the %s package %s names no version, and Switchboard pins an exact one", p.RegistryType, id)
	}
	switch p.Transport.Type {
	case TransportStdio:
	case TransportHTTP, TransportSSE:
		return fmt.Errorf("the %s package %s serves %s from a local process, which add does not set up yet", p.RegistryType, id, p.Transport.Type)
	default:
		return fmt.Errorf("the %s package %s has an unknown transport %q (known: stdio, streamable-http, sse)", p.RegistryType, id, clip(p.Transport.Type))
	}
	if len(p.RuntimeArguments)+len(p.PackageArguments) > maxInputs || len(p.EnvironmentVariables) > maxInputs {
		return fmt.Errorf("the %s package %s has over %d arguments or variables", p.RegistryType, id, maxInputs)
	}
	return nil
}

var sha256RE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-f0-9]{64}$`) })

// checkRemote reports why a remote cannot be used.
func checkRemote(r *Transport) error {
	switch r.Type {
	case TransportHTTP, TransportSSE:
	default:
		return fmt.Errorf("a remote with the unknown transport %q (known: streamable-http, sse)", clip(r.Type))
	}
	u, err := url.Parse(strings.NewReplacer("{", "", "}", "").Replace(r.URL))
	if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" || len(r.URL) > maxString {
		return fmt.Errorf("a remote with the invalid URL %q: it must be http or https", clip(r.URL))
	}
	if len(r.Headers) > maxInputs || len(r.Variables) > maxInputs {
		return fmt.Errorf("a remote with over %d headers or variables", maxInputs)
	}
	return nil
}
