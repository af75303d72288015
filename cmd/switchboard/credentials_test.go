package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-mcp/switchboard/config"
)

// TestUnencryptedWarnsOnce: a process that opens the unencrypted file
// store several times (a reload, a second engine, secret set after a
// lookup) warns once, naming the directory and the fix; the encrypted one
// never warns, and doctor's store (no writer) says nothing.
func TestUnencryptedWarnsOnce(t *testing.T) {
	unencryptedOnce = sync.Once{}
	t.Cleanup(func() { unencryptedOnce = sync.Once{} })
	var stderr bytes.Buffer
	e := &env{stderr: &stderr, lookupEnv: func(string) (string, bool) { return "", false }}
	file := config.Settings{CredentialStore: "file"}
	first := t.TempDir()
	for _, dir := range []string{first, first, t.TempDir()} {
		if _, _, err := e.openCredentials(t.Context(), file, dir, &stderr); err != nil {
			t.Fatal(err)
		}
	}
	l := &lazyStore{ctx: t.Context(), e: e, settings: file, stateDir: t.TempDir(), warn: &stderr}
	if _, _, err := l.Get("secret/A"); err != nil {
		t.Fatal(err)
	}
	out := stderr.String()
	if n := strings.Count(out, "warning:"); n != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", n, out)
	}
	for _, want := range []string{"kept unencrypted in " + filepath.Join(first, "credentials"), `since settings.credentialStore is "file"`, `set settings.credentialStore to "encrypted-file"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the warning %q does not say %q", out, want)
		}
	}
}

// TestEncryptedDoesNotWarn: the encrypted file store, and a store opened
// without a writer, warn of nothing.
func TestEncryptedDoesNotWarn(t *testing.T) {
	unencryptedOnce = sync.Once{}
	t.Cleanup(func() { unencryptedOnce = sync.Once{} })
	var stderr bytes.Buffer
	key := "z+iMQ2uCxESLD4O0d6GlYAkB6nAtIQGmetH8Dmx8N3c="
	e := &env{stderr: &stderr, lookupEnv: func(k string) (string, bool) { return key, k == "SWITCHBOARD_CREDENTIAL_KEY" }}
	if _, _, err := e.openCredentials(t.Context(), config.Settings{CredentialStore: "encrypted-file"}, t.TempDir(), &stderr); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.openCredentials(t.Context(), config.Settings{CredentialStore: "file"}, t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr = %q, want nothing", stderr.String())
	}
}

// withoutUnencryptedWarning removes the warning about the unencrypted file
// store from a command's output, for tests that use that store on purpose
// and check the rest of what the command says.
func withoutUnencryptedWarning(s string) string {
	var out []string
	for _, line := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(line, "warning: credentials (secrets and OAuth tokens) are kept unencrypted in ") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}
