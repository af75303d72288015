// Package redact keeps the secret values a process has resolved (a
// server's header, env and URL secrets, the values of ${secret:…}
// references, OAuth tokens) and replaces them, wherever text leaves the
// process's memory: the lines a server writes to stderr, logs, traces,
// the audit trail and error text. A Set is the one place that knows the
// values; each sink asks it to clean what it writes.
//
// Replacing known values is a safety net for what servers and libraries
// print by accident. It cannot catch a secret that a hostile server
// encodes (base64, split across lines) before printing it.
package redact

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// Replacement is what a secret value is replaced by, unless it was added
// with a replacement of its own.
const Replacement = "[redacted]"

// MinLen is the length below which a value is not replaced: "1", "on" or
// "abc" would be replaced everywhere they appear and make text unreadable,
// and say little of a secret.
const MinLen = 4

// maxValues bounds the values a Set keeps (with their escaped spellings):
// the oldest go first. A process that refreshes tokens for months would
// otherwise keep every one.
const maxValues = 4096

// A Set holds secret values and replaces them in text. The zero value is
// an empty set, ready to use. Its methods are safe for concurrent use; a
// nil *Set replaces nothing.
type Set struct {
	mu     sync.Mutex
	order  []string          // values, oldest first
	with   map[string]string // value → its replacement
	dirty  bool              // values changed since r was made
	r      *strings.Replacer // nil when empty
	maxLen int               // the longest value
}

// Add adds a secret value, to be replaced by Replacement. Values shorter
// than MinLen are ignored. Its URL query and JSON string spellings are
// added too, where they differ.
func (s *Set) Add(value string) { s.AddAs(value, Replacement) }

// AddAs adds a secret value to be replaced by with (a server's URL by its
// address without the secret, say). A value added before keeps the
// replacement it had.
func (s *Set) AddAs(value, with string) {
	if s == nil || len(value) < MinLen {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := s.add(value, with)
	if q := url.QueryEscape(value); q != value {
		changed = s.add(q, with) || changed
	}
	for _, j := range jsonStrings(value) {
		if j != value {
			changed = s.add(j, with) || changed
		}
	}
	s.dirty = s.dirty || changed
}

func (s *Set) add(value, with string) bool {
	if _, ok := s.with[value]; ok {
		return false
	}
	if s.with == nil {
		s.with = map[string]string{}
	}
	s.with[value] = with
	s.order = append(s.order, value)
	if len(s.order) > maxValues {
		delete(s.with, s.order[0])
		s.order = s.order[1:]
	}
	return true
}

// rebuild makes the replacer, if the values changed: longer values first, so that a value that
// holds another (a header "Bearer TOKEN" and the TOKEN its reference
// resolved to) is replaced whole.
func (s *Set) rebuild() {
	if !s.dirty {
		return
	}
	s.dirty = false
	vals := slices.Clone(s.order)
	slices.SortStableFunc(vals, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, s.with[v])
	}
	s.r = strings.NewReplacer(pairs...)
	s.maxLen = 0
	if len(vals) > 0 {
		s.maxLen = len(vals[0])
	}
}

// replacer returns the current replacer and the longest value's length.
func (s *Set) replacer() (*strings.Replacer, int) {
	if s == nil {
		return nil, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebuild()
	return s.r, s.maxLen
}

// Empty reports whether the set holds no value: nothing would be
// replaced.
func (s *Set) Empty() bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.order) == 0
}

// String returns text with every secret value replaced.
func (s *Set) String(text string) string {
	r, _ := s.replacer()
	if r == nil {
		return text
	}
	return r.Replace(text)
}

// Bytes returns b with every secret value replaced: b itself when it
// holds none.
func (s *Set) Bytes(b []byte) []byte {
	r, _ := s.replacer()
	if r == nil {
		return b
	}
	text := string(b)
	if clean := r.Replace(text); clean != text {
		return []byte(clean)
	}
	return b
}

// jsonStrings are the spellings of v inside a JSON string: as Go writes
// it (<, > and & escaped) and as most other encoders do.
func jsonStrings(v string) []string {
	var out []string
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		_ = enc.Encode(v)
		q := strings.TrimSuffix(b.String(), "\n")
		out = append(out, q[1:len(q)-1])
	}
	return out
}
