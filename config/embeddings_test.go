package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestEmbeddingsResolve(t *testing.T) {
	const canary = "sk-canary-3b9f"
	lookup := lookupOf(map[string]string{"KEY": canary, "HOST": "127.0.0.1:11434", "EMPTY": ""})
	for _, tt := range []struct {
		name       string
		e          Embeddings
		url, key   string
		wantErr    string
		referenceE bool
	}{
		{name: "plain", e: Embeddings{BaseURL: "http://127.0.0.1:11434/v1/", Model: "m"}, url: "http://127.0.0.1:11434/v1"},
		{name: "references", e: Embeddings{BaseURL: "http://${HOST}/v1", APIKey: "${KEY}"}, url: "http://127.0.0.1:11434/v1", key: canary},
		{name: "env form", e: Embeddings{BaseURL: "https://api.example.com/v1", APIKey: "$env:KEY"}, url: "https://api.example.com/v1", key: canary},
		{name: "default", e: Embeddings{BaseURL: "${NOPE:-http://localhost:8080/v1}"}, url: "http://localhost:8080/v1"},
		{name: "unset key", e: Embeddings{BaseURL: "http://h/v1", APIKey: "${MISSING}"},
			wantErr: "settings.embeddings.apiKey: environment variable MISSING is not set or empty (hint: export MISSING before starting switchboard)", referenceE: true},
		{name: "empty key", e: Embeddings{BaseURL: "http://h/v1", APIKey: "${EMPTY}"}, wantErr: "environment variable EMPTY", referenceE: true},
		{name: "unset url", e: Embeddings{BaseURL: "${MISSING}"}, wantErr: "settings.embeddings.baseUrl: environment variable MISSING", referenceE: true},
		{name: "not http", e: Embeddings{BaseURL: "ftp://${KEY}/v1"}, wantErr: `settings.embeddings.baseUrl: "ftp://${KEY}/v1" is not an http:// or https:// URL`},
		{name: "bad reference", e: Embeddings{BaseURL: "http://h/v1", APIKey: "${KEY"}, wantErr: "settings.embeddings.apiKey: unterminated reference"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tt.e.Resolve(lookup)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), canary) {
					t.Errorf("the error shows the key: %v", err)
				}
				if got := errors.Is(err, ErrReference); got != tt.referenceE {
					t.Errorf("errors.Is(err, ErrReference) = %v, want %v", got, tt.referenceE)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.BaseURL.Reveal() != tt.url || r.APIKey.Reveal() != tt.key || r.Model != tt.e.Model {
				t.Errorf("got %q, %q, %q; want %q, %q, %q", r.BaseURL.Reveal(), r.APIKey.Reveal(), r.Model, tt.url, tt.key, tt.e.Model)
			}
			for _, s := range []string{fmt.Sprintf("%v", r), fmt.Sprintf("%+v", *r), fmt.Sprintf("%#v", r)} {
				if strings.Contains(s, canary) {
					t.Errorf("printing the resolved settings shows the key: %s", s)
				}
			}
		})
	}
}

func TestEmbeddingsRedact(t *testing.T) {
	r, err := (&Embeddings{BaseURL: "http://${HOST}/v1", APIKey: "Bearer-${KEY}"}).Resolve(lookupOf(map[string]string{"KEY": "sk-canary-3b9f", "HOST": "secret-host.example"}))
	if err != nil {
		t.Fatal(err)
	}
	got := r.Redact(`401: key "Bearer-sk-canary-3b9f" is invalid for secret-host.example; sk-canary-3b9f`)
	if want := `401: key "[redacted]" is invalid for [redacted]; [redacted]`; got != want {
		t.Errorf("Redact:\n got %s\nwant %s", got, want)
	}
}
