package config

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"
	"testing"
)

// TestCredentialKey: the encrypted file store's key comes from the
// variable settings.credentialStoreKey names (SWITCHBOARD_CREDENTIAL_KEY
// by default) or from what its command prints, as 32 bytes of base64;
// anything else is an error naming the reference and what to do, never
// the value.
func TestCredentialKey(t *testing.T) {
	key := bytes.Repeat([]byte{7}, CredentialKeySize)
	b64 := base64.StdEncoding.EncodeToString(key)
	env := func(vars map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}
	ctx := context.Background()
	tests := []struct {
		name     string
		settings Settings
		vars     map[string]string
		want     []byte
		errs     []string // in the error
	}{
		{"another store", Settings{CredentialStore: "file"}, nil, nil, nil},
		{"default variable", Settings{CredentialStore: "encrypted-file"}, map[string]string{"SWITCHBOARD_CREDENTIAL_KEY": b64 + "\n"}, key, nil},
		{"default variable unset", Settings{CredentialStore: "encrypted-file"}, nil, nil,
			[]string{`settings.credentialStore "encrypted-file" (its key defaults to ${SWITCHBOARD_CREDENTIAL_KEY})`, "the variable SWITCHBOARD_CREDENTIAL_KEY is not set", "openssl rand -base64 32"}},
		{"named variable", Settings{CredentialStore: "encrypted-file", CredentialStoreKey: "${MY_KEY}"}, map[string]string{"MY_KEY": b64}, key, nil},
		{"$env:", Settings{CredentialStore: "encrypted-file", CredentialStoreKey: "$env:MY_KEY"}, map[string]string{"MY_KEY": b64}, key, nil},
		{"named variable unset", Settings{CredentialStore: "encrypted-file", CredentialStoreKey: "${MY_KEY}"}, map[string]string{"SWITCHBOARD_CREDENTIAL_KEY": b64}, nil,
			[]string{"settings.credentialStoreKey: the variable MY_KEY is not set"}},
		{"passphrase", Settings{CredentialStore: "encrypted-file", CredentialStoreKey: "${MY_KEY}"}, map[string]string{"MY_KEY": "correct horse battery staple"}, nil,
			[]string{"settings.credentialStoreKey: ${MY_KEY} must hold a key of 32 random bytes in standard base64, not a passphrase"}},
		{"short key", Settings{CredentialStore: "encrypted-file"}, map[string]string{"SWITCHBOARD_CREDENTIAL_KEY": base64.StdEncoding.EncodeToString(key[:16])}, nil,
			[]string{"must hold a key of 32 random bytes"}},
		{"command", Settings{CredentialStore: "encrypted-file", CredentialStoreKey: "${cmd:printf " + b64 + "}"}, nil, key, nil},
		{"!command", Settings{CredentialStore: "encrypted-file", CredentialStoreKey: "!printf " + b64}, nil, key, nil},
		{"command prints nothing", Settings{CredentialStore: "encrypted-file", CredentialStoreKey: "${cmd:true}"}, nil, nil,
			[]string{"settings.credentialStoreKey: the command of ${cmd:true} printed nothing"}},
		{"command fails", Settings{CredentialStore: "encrypted-file", CredentialStoreKey: "${cmd:false}"}, nil, nil,
			[]string{"settings.credentialStoreKey: ${cmd:false}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.settings.CredentialKey(ctx, env(tt.vars))
			if !bytes.Equal(got, tt.want) {
				t.Errorf("key = %x, want %x", got, tt.want)
			}
			if (err != nil) != (len(tt.errs) > 0) {
				t.Fatalf("err = %v, want one saying %q", err, tt.errs)
			}
			for _, want := range tt.errs {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to say %q", err, want)
				}
			}
			if err != nil && (strings.Contains(err.Error(), "horse") || strings.Contains(err.Error(), base64.StdEncoding.EncodeToString(key[:16]))) {
				t.Errorf("the error shows the value: %v", err)
			}
		})
	}
}

// TestCredentialStoreKeyMerged: the key reference set in the user's file
// reaches the settings.
func TestCredentialStoreKeyMerged(t *testing.T) {
	d := newDirs(t)
	p := pathsOf(d)
	writeFile(t, p.user, `{"settings": {"credentialStore": "encrypted-file", "credentialStoreKey": "${MY_KEY}"}}`)
	c := Load(d)
	noErrors(t, c)
	if c.Settings.CredentialStore != "encrypted-file" || c.Settings.CredentialStoreKey != "${MY_KEY}" || c.Settings.CredentialKeyRef() != "${MY_KEY}" {
		t.Errorf("settings = %q, %q", c.Settings.CredentialStore, c.Settings.CredentialStoreKey)
	}
	writeFile(t, p.user, `{"settings": {"credentialStore": "encrypted-file"}}`)
	if c := Load(d); c.Settings.CredentialKeyRef() != "${SWITCHBOARD_CREDENTIAL_KEY}" {
		t.Errorf("default reference = %q", c.Settings.CredentialKeyRef())
	}
}
