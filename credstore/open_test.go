package credstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/credstore"
)

func contextCancelled(t *testing.T) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	return ctx, cancel
}

func TestOpenFile(t *testing.T) {
	state := t.TempDir()
	s, why, err := credstore.Open("file", state, nil)
	if err != nil || s.Name() != "file" || why != "" {
		t.Fatalf("Open(file) = %v, %q, %v", s, why, err)
	}
	if err := s.Set("secret/a", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(state, "credentials")); err != nil {
		t.Errorf("the file store is not in STATE/credentials: %v", err)
	}
	if got := credstore.Describe(s); got != "file store in "+filepath.Join(state, "credentials") {
		t.Errorf("Describe = %q", got)
	}
}

func TestOpenUnknownKind(t *testing.T) {
	if _, _, err := credstore.Open("vault", t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), `unknown credential store "vault"`) {
		t.Errorf("Open(vault) = %v", err)
	}
}

// TestOpenDefaultWithoutKeychain: with no keychain to reach, the default
// is the file store, and it says why; "keychain" asked for by name is an
// error that says what is missing and what to do.
func TestOpenDefaultWithoutKeychain(t *testing.T) {
	withoutSessionBus(t)
	state := t.TempDir()
	s, why, err := credstore.Open("", state, nil)
	if err != nil || s.Name() != "file" || !strings.Contains(why, "no keychain: no D-Bus session bus") {
		t.Errorf("Open() = %v, %q, %v; want the file store, saying there is no keychain", s, why, err)
	}
	_, _, err = credstore.Open("keychain", state, nil)
	if err == nil || !strings.Contains(err.Error(), `settings.credentialStore is "keychain", but no D-Bus session bus`) || !strings.Contains(err.Error(), `set it to "encrypted-file"`) {
		t.Errorf("Open(keychain) = %v", err)
	}
}

// TestOpenDefaultKeepsToItsStore: once credentials are stored, the default
// stays with their store: the file store that holds some is chosen
// whatever keychain there is, and (TestOpenDefaultKeepsToTheKeychain) a
// keychain index that lists some makes an unreachable keychain an error,
// not an empty file store.
func TestOpenDefaultKeepsToItsStore(t *testing.T) {
	state := t.TempDir()
	if err := credstore.NewFile(filepath.Join(state, "credentials")).Set("secret/a", []byte("v")); err != nil {
		t.Fatal(err)
	}
	s, why, err := credstore.Open("", state, nil)
	if err != nil || s.Name() != "file" || why != "it holds credentials already" {
		t.Errorf("Open() with a file store in use = %v, %q, %v", s, why, err)
	}
}

func TestOpenDefaultKeepsToTheKeychain(t *testing.T) {
	withoutSessionBus(t)
	state := t.TempDir()
	index := filepath.Join(state, "keychain", "index.json")
	if err := os.MkdirAll(filepath.Dir(index), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(index, []byte(`{"service":"switchboard","keys":["secret/a"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := credstore.Open("", state, nil)
	if err == nil || !strings.Contains(err.Error(), "credentials are kept in the keychain (listed in "+index+"), but no D-Bus session bus") {
		t.Errorf("Open() with the keychain in use but unreachable = %v", err)
	}
}

// TestOpenDefaultKeychain: where a keychain answers, an empty state
// directory opens it.
func TestOpenDefaultKeychain(t *testing.T) {
	keychainService(t)
	s, why, err := credstore.Open("", t.TempDir(), nil)
	if err != nil || s.Name() != "keychain" || why != "the keychain answers" {
		t.Errorf("Open() = %v, %q, %v; want the keychain", s, why, err)
	}
	if got := credstore.Describe(s); got != `OS keychain, service "switchboard"` {
		t.Errorf("Describe = %q", got)
	}
}
