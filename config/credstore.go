package config

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strings"

	"github.com/tailscale/hujson"
)

// settings.credentialStore names where ${secret:NAME} references and OAuth
// tokens are kept (credstore.Open): "keychain", "file" (unencrypted), or
// "encrypted-file", whose key settings.credentialStoreKey refers to
// (default: DefaultCredentialKey):
//
//	"credentialStore": "encrypted-file",
//	"credentialStoreKey": "${SWITCHBOARD_CREDENTIAL_KEY}"
//
// Both belong in the user's own files, never a project's: a project must
// not move where credentials are kept (to the unencrypted file store, say),
// nor choose the key that locks them.

// DefaultCredentialKey is the reference settings.credentialStoreKey
// defaults to: the variable that holds the encrypted file store's key.
const DefaultCredentialKey = "${SWITCHBOARD_CREDENTIAL_KEY}"

// CredentialKeySize is the size of the key settings.credentialStoreKey
// refers to, in bytes: an AES-256 key.
const CredentialKeySize = 32

const ownFileOnly = "belongs in your own configuration file, not a project's: a project cannot move where credentials are kept"

// credentialStore decodes settings.credentialStore.
func (d *decoder) credentialStore(v *hujson.Value, path string) *string {
	str, ok := d.str(v, path)
	switch {
	case !ok:
		return nil
	case d.src.InProject():
		d.errorf(v, path, ownFileOnly)
		return nil
	case str != "keychain" && str != "file" && str != "encrypted-file":
		d.errorf(v, path, `must be "keychain" (the OS keychain), "encrypted-file" (files encrypted with settings.credentialStoreKey) or "file" (unencrypted files), not %q; leave it out for the default`, str)
		return nil
	}
	return &str
}

// credentialStoreKey decodes settings.credentialStoreKey: one ${VAR}
// reference, or one ${cmd:…} reference where the file may run commands.
func (d *decoder) credentialStoreKey(v *hujson.Value, path string) *string {
	str, ok := d.str(v, path)
	if !ok {
		return nil
	}
	if d.src.InProject() {
		d.errorf(v, path, "%s, nor choose the key that encrypts them", ownFileOnly)
		return nil
	}
	refs, err := parseRefs(str)
	if err != nil || len(refs) != 1 || refs[0].start != 0 || refs[0].end != len(str) || refs[0].secret || refs[0].hasDef {
		d.errorf(v, path, `must be one reference to the key: a variable ("${SWITCHBOARD_CREDENTIAL_KEY}") or a command that prints it ("${cmd:op read op://vault/switchboard/key}"), not a literal or another kind of reference (the value is not shown; make a key with: openssl rand -base64 32)`)
		return nil
	}
	if refs[0].cmd && !d.commandRefAllowed() {
		d.errorf(v, path, "a ${cmd:…} reference runs a command, and is allowed only in your own user-global files")
		return nil
	}
	return &str
}

// checkCredentialStore checks that a file that sets
// settings.credentialStoreKey does not also set another store than
// "encrypted-file": the key would mean nothing.
func (d *decoder) checkCredentialStore(s *fileSettings, keyAt *hujson.Value, path string) {
	if s.credStoreKey != nil && s.credStore != nil && *s.credStore != "encrypted-file" {
		d.errorf(keyAt, joinPath(path, "credentialStoreKey"), `is the key of the encrypted file store, and credentialStore is %q: remove the key, or set "credentialStore": "encrypted-file"`, *s.credStore)
		s.credStoreKey = nil
	}
}

// CredentialKeyRef returns the reference to the encrypted file store's
// key: settings.credentialStoreKey, or DefaultCredentialKey.
func (s *Settings) CredentialKeyRef() string {
	if s.CredentialStoreKey != "" {
		return s.CredentialStoreKey
	}
	return DefaultCredentialKey
}

// CredentialKey returns the key of the encrypted file store: the value of
// the variable settings.credentialStoreKey refers to (looked up with env;
// nil: os.LookupEnv), or what its ${cmd:…} prints (config.RunCommand,
// within ctx), 32 bytes in standard base64. It returns nil when
// settings.credentialStore is not "encrypted-file". An unset variable, a
// command that fails and a key that is not 32 bytes of base64 are errors
// that name the reference, never its value.
func (s *Settings) CredentialKey(ctx context.Context, env func(string) (string, bool)) ([]byte, error) {
	if s.CredentialStore != "encrypted-file" {
		return nil, nil
	}
	ref := s.CredentialKeyRef()
	field := "settings.credentialStoreKey"
	if s.CredentialStoreKey == "" {
		field = `settings.credentialStore "encrypted-file" (its key defaults to ` + DefaultCredentialKey + ")"
	}
	refs, err := parseRefs(ref)
	if err != nil || len(refs) != 1 {
		return nil, fmt.Errorf(`%s is not one reference to the key (hint: set it to "%s", and that variable to a key: openssl rand -base64 32)`, field, DefaultCredentialKey)
	}
	if env == nil {
		env = os.LookupEnv
	}
	var text string
	if r := refs[0]; r.cmd {
		argv, err := splitCommand(r.name)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %v", field, ref, err)
		}
		out, err := RunCommand(ctx, argv)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", field, ref, err)
		}
		if text = string(out); strings.TrimSpace(text) == "" {
			return nil, fmt.Errorf("%s: the command of %s printed nothing (hint: run it yourself to see why)", field, ref)
		}
	} else if text, _ = env(r.name); text == "" {
		return nil, fmt.Errorf("%s: the variable %s is not set: set it, in the environment switchboard runs in, to the store's key (make one with: openssl rand -base64 32, and keep it: without it the stored credentials cannot be read)", field, r.name)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil || len(key) != CredentialKeySize {
		return nil, fmt.Errorf("%s: %s must hold a key of %d random bytes in standard base64, not a passphrase (make one with: openssl rand -base64 32)", field, ref, CredentialKeySize)
	}
	return key, nil
}
