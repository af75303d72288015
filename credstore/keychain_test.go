package credstore_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"

	"github.com/switchboard-mcp/switchboard/credstore"
)

// keychainService returns a keychain service of the test's own, whose
// items are removed when the test ends. It skips the test where no
// keychain answers, and fails it when $SWITCHBOARD_REQUIRE_KEYCHAIN=1
// (scripts/test.sh sets it in the GNOME Keyring session it starts for these
// tests). Nothing here calls go-keyring before that check: without a
// session bus it would start one (dbus-launch) that outlives the test.
func keychainService(t *testing.T) string {
	t.Helper()
	service := "switchboard-test-" + rand.Text()[:10]
	if err := credstore.KeychainAvailable(service); err != nil {
		if os.Getenv("SWITCHBOARD_REQUIRE_KEYCHAIN") == "1" {
			t.Fatalf("SWITCHBOARD_REQUIRE_KEYCHAIN=1, but %v", err)
		}
		t.Skipf("no keychain here (%v); scripts/test.sh runs this test in a GNOME Keyring session", err)
	}
	t.Cleanup(func() { keyring.DeleteAll(service) })
	return service
}

func TestKeychainRoundTrip(t *testing.T) {
	service := keychainService(t)
	dir := filepath.Join(t.TempDir(), "keychain")
	s := credstore.NewKeychain(service, dir)
	if _, ok, err := s.Get("secret/a"); ok || err != nil {
		t.Fatalf("Get of a missing key = %v, %v", ok, err)
	}
	const canary = "kc-canary-91f3 with spaces\nand a second line"
	for key, v := range map[string]string{"secret/a": canary, "secret/b": "two", "oauth/gh/token": `{"access_token":"x"}`} {
		if err := s.Set(key, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if v, ok, err := s.Get("secret/a"); string(v) != canary || !ok || err != nil {
		t.Errorf("Get = %q, %v, %v; want the value set", v, ok, err)
	}
	if err := s.Set("secret/b", []byte("deux")); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := s.Get("secret/b"); string(v) != "deux" {
		t.Errorf("Get after a second Set = %q, want the new value", v)
	}
	if keys, err := s.Keys("secret/"); err != nil || !slices.Equal(keys, []string{"secret/a", "secret/b"}) {
		t.Errorf("Keys(secret/) = %v, %v", keys, err)
	}
	// The index in the directory lists names, never a value.
	index, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(index), "kc-canary") || strings.Contains(string(index), "deux") {
		t.Errorf("the index holds a value:\n%s", index)
	}
	if info, err := os.Stat(filepath.Join(dir, "index.json")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("index mode %v, %v; want 0600", info.Mode().Perm(), err)
	}
	if err := s.Delete("secret/a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("secret/a"); err != nil {
		t.Errorf("deleting a missing key: %v", err)
	}
	if _, ok, _ := s.Get("secret/a"); ok {
		t.Error("Get after Delete found the item")
	}
	// An item removed in the keychain's own program drops out of Keys.
	if err := keyring.Delete(service, "secret/b"); err != nil {
		t.Fatal(err)
	}
	if keys, err := s.Keys(""); err != nil || !slices.Equal(keys, []string{"oauth/gh/token"}) {
		t.Errorf("Keys after the keychain lost secret/b = %v, %v; want only oauth/gh/token", keys, err)
	}
}

// TestKeychainStoresApart: two services never see each other's items.
func TestKeychainStoresApart(t *testing.T) {
	a, b := keychainService(t), keychainService(t)
	sa := credstore.NewKeychain(a, t.TempDir())
	sb := credstore.NewKeychain(b, t.TempDir())
	if err := sa.Set("secret/x", []byte("from a")); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := sb.Get("secret/x"); ok || err != nil {
		t.Errorf("another service's Get = %v, %v; want nothing", ok, err)
	}
}

func TestKeychainLock(t *testing.T) {
	s := credstore.NewKeychain("switchboard-test-unused", t.TempDir())
	unlock, err := s.Lock(t.Context(), "oauth/x")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := contextCancelled(t)
	defer cancel()
	if _, err := s.Lock(ctx, "oauth/x"); err == nil {
		t.Fatal("a second Lock succeeded while the first held it")
	}
	unlock()
	u, err := s.Lock(t.Context(), "oauth/x")
	if err != nil {
		t.Fatal(err)
	}
	u()
}

// withoutSessionBus makes the test a process with no D-Bus session bus to
// find, where that is possible (Linux without /run/user/UID/bus).
func withoutSessionBus(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("only Linux reaches its keychain through a D-Bus session bus")
	}
	if _, err := os.Stat(fmt.Sprintf("/run/user/%d/bus", os.Getuid())); err == nil {
		t.Skip("this user has a systemd session bus, which cannot be hidden from the test")
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
}

// TestNoSessionBus: without a session bus the keychain says so, and never
// starts one (go-keyring's D-Bus library would run dbus-launch).
func TestNoSessionBus(t *testing.T) {
	withoutSessionBus(t)
	if err := credstore.KeychainAvailable(credstore.Service); err == nil || !strings.Contains(err.Error(), "no D-Bus session bus") {
		t.Errorf("KeychainAvailable = %v, want it to name the missing bus", err)
	}
	s := credstore.NewKeychain(credstore.Service, t.TempDir())
	if _, _, err := s.Get("secret/x"); err == nil || !strings.Contains(err.Error(), "keychain") || !strings.Contains(err.Error(), "no D-Bus session bus") {
		t.Errorf("Get = %v, want an error naming the keychain and the missing bus", err)
	}
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		t.Error("a session bus was started: $DBUS_SESSION_BUS_ADDRESS was set")
	}
}
