package config

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// ResolvedEmbeddings is settings.embeddings with its references resolved,
// for the one client that talks to the endpoint.
type ResolvedEmbeddings struct {
	BaseURL Secret // e.g. http://127.0.0.1:11434/v1, without a final slash
	APIKey  Secret // empty when apiKey is not set
	Model   string

	values []Secret // every value a reference resolved to, and the key, for Redact
}

// Resolve expands the references in baseUrl and apiKey with lookup, like
// [Server.Resolve]: a variable or secret that is unset or empty (without a
// default) is a *ReferenceError naming settings.embeddings and the variable,
// and the resolved base URL must be an http:// or https:// URL.
func (e *Embeddings) Resolve(lookup Lookup) (*ResolvedEmbeddings, error) {
	r := &ResolvedEmbeddings{Model: e.Model}
	expand := func(field, value string) (Secret, error) {
		path := "settings.embeddings." + field
		v, err := expandRefs(value, lookup, &r.values)
		var re *ReferenceError
		if errors.As(err, &re) {
			re.Path = path
			return Secret{}, re
		}
		if err != nil {
			return Secret{}, fmt.Errorf("%s: %w", path, err)
		}
		return newSecret(v), nil
	}
	var err error
	if r.BaseURL, err = expand("baseUrl", e.BaseURL); err != nil {
		return nil, err
	}
	base := strings.TrimRight(r.BaseURL.Reveal(), "/")
	if u, perr := url.Parse(base); perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("settings.embeddings.baseUrl: %q is not an http:// or https:// URL once its references are resolved (the value is not shown)", e.BaseURL)
	}
	r.BaseURL = newSecret(base)
	if e.APIKey != "" {
		if r.APIKey, err = expand("apiKey", e.APIKey); err != nil {
			return nil, err
		}
		if r.APIKey.Reveal() != "" {
			r.values = append(r.values, r.APIKey)
		}
	}
	// Longest first, so that a value holding another is replaced whole.
	slices.SortStableFunc(r.values, func(a, b Secret) int { return len(b.Reveal()) - len(a.Reveal()) })
	return r, nil
}

// Redact replaces every resolved value of a reference (and the API key) in s
// with [redacted], for text that came back from the network: an endpoint
// may echo what it was sent.
func (r *ResolvedEmbeddings) Redact(s string) string {
	for _, v := range r.values {
		if len(v.Reveal()) >= 4 {
			s = strings.ReplaceAll(s, v.Reveal(), "[redacted]")
		}
	}
	return s
}
