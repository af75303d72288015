package credstore_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-mcp/switchboard/credstore"
)

func TestEncryptedFileStore(t *testing.T) {
	storeSuite(t, func(t *testing.T) credstore.Store {
		return openEncrypted(t, filepath.Join(t.TempDir(), "creds"), testKey(1))
	})
}

func openEncrypted(t *testing.T, dir string, key []byte) *credstore.EncryptedFile {
	t.Helper()
	e, err := credstore.OpenEncryptedFile(dir, key, &credstore.EncryptedFileOptions{KeyRef: "${SWITCHBOARD_CREDENTIAL_KEY}"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// valueFile returns the one file of dir that holds a value.
func valueFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.cred"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

// TestEncryptedFileNoClearText: the value is in no file of the store, in
// any form a grep finds (as written, nor its base64 or hex); each file is
// 0600 in a 0700 directory; and no temporary file is left behind.
func TestEncryptedFileNoClearText(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "creds")
	e := openEncrypted(t, dir, testKey(1))
	const canary = "ghp_canary0123456789abcdef"
	for _, k := range []string{"secret/GH", "oauth/gh/h/token"} {
		if err := e.Set(k, []byte(canary)); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range entries {
		p := filepath.Join(dir, ent.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, form := range []string{canary, "Z2hwX2NhbmFyeT", "6768705f63616e617279"} {
			if bytes.Contains(b, []byte(form)) {
				t.Errorf("%s holds the secret (%q)", ent.Name(), form)
			}
		}
		if strings.HasPrefix(ent.Name(), ".tmp-") {
			t.Errorf("a temporary file is left: %s", ent.Name())
		}
		info, _ := ent.Info()
		if runtime.GOOS != "windows" && strings.HasSuffix(ent.Name(), ".cred") && info.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", ent.Name(), info.Mode().Perm())
		}
	}
	if info, err := os.Stat(dir); err != nil || runtime.GOOS != "windows" && info.Mode().Perm() != 0o700 {
		t.Errorf("the store's directory: %v, %v; want mode 0700", info.Mode(), err)
	}
	if got := len(valueFiles(t, dir)); got != 2 {
		t.Fatalf("%d value files, want 2", got)
	}
}

// TestEncryptedFileTampered: a file edited by one byte anywhere, cut
// short, or copied over another credential's is refused with an error
// naming the credential, never read as another value or as nothing.
func TestEncryptedFileTampered(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "creds")
	e := openEncrypted(t, dir, testKey(1))
	if err := e.Set("secret/A", []byte("value-of-a")); err != nil {
		t.Fatal(err)
	}
	if err := e.Set("secret/B", []byte("value-of-b")); err != nil {
		t.Fatal(err)
	}
	files := valueFiles(t, dir) // in the order of their names, which are the keys in base32
	a, b := files[0], files[1]
	good, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	for i := range good {
		bad := slices.Clone(good)
		bad[i] ^= 0x01
		if err := os.WriteFile(a, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if v, ok, err := e.Get("secret/A"); err == nil || ok || v != nil {
			t.Fatalf("byte %d flipped: Get = %q, %v, %v; want an error", i, v, ok, err)
		} else if !strings.Contains(err.Error(), `credential "secret/A"`) || strings.Contains(err.Error(), "value-of") {
			t.Fatalf("byte %d flipped: the error %q does not name the credential, or shows a value", i, err)
		}
	}
	if err := os.WriteFile(a, good[:len(good)-1], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Get("secret/A"); err == nil {
		t.Error("a file cut short is read")
	}
	// B's file copied over A's: it decrypts only as B's.
	bb, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(a, bb, 0o600); err != nil {
		t.Fatal(err)
	}
	if v, _, err := e.Get("secret/A"); err == nil || !strings.Contains(err.Error(), "does not decrypt") {
		t.Errorf("B's value under A's name: Get = %q, %v; want an error", v, err)
	}
	// The two swapped: neither is read.
	if err := os.WriteFile(b, good, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"secret/A", "secret/B"} {
		if v, _, err := e.Get(k); err == nil {
			t.Errorf("swapped: Get(%s) = %q; want an error", k, v)
		}
	}
}

// TestEncryptedFileWrongKey: a store written with one key is refused at
// open with another, with an error naming the variable and what to do;
// never read as garbage or as an empty store.
func TestEncryptedFileWrongKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "creds")
	if err := openEncrypted(t, dir, testKey(1)).Set("secret/A", []byte("value-of-a")); err != nil {
		t.Fatal(err)
	}
	e, err := credstore.OpenEncryptedFile(dir, testKey(2), &credstore.EncryptedFileOptions{KeyRef: "${SWITCHBOARD_CREDENTIAL_KEY}"})
	if e != nil || !errors.Is(err, credstore.ErrWrongKey) {
		t.Fatalf("OpenEncryptedFile with another key = %v, %v; want ErrWrongKey", e, err)
	}
	for _, want := range []string{"${SWITCHBOARD_CREDENTIAL_KEY}", "written with a different key", "set ${SWITCHBOARD_CREDENTIAL_KEY} to the key the store was written with", dir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "value-of-a") {
		t.Errorf("the error shows the value: %v", err)
	}
	// Through Open too, and with a key of the wrong size.
	state := t.TempDir()
	if err := openEncrypted(t, filepath.Join(state, "credentials-encrypted"), testKey(1)).Set("secret/A", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := credstore.Open("encrypted-file", state, &credstore.OpenOptions{Key: testKey(3), KeyRef: "${K}"}); !errors.Is(err, credstore.ErrWrongKey) || !strings.Contains(err.Error(), "${K}") {
		t.Errorf("Open(encrypted-file) with another key = %v", err)
	}
	if _, err := credstore.OpenEncryptedFile(dir, testKey(1)[:16], nil); err == nil || !strings.Contains(err.Error(), "must be 32 bytes") {
		t.Errorf("a 16-byte key = %v", err)
	}
}

// TestOpenEncryptedFileWithoutKey: "encrypted-file" with no key is an
// error saying which variable to set.
func TestOpenEncryptedFileWithoutKey(t *testing.T) {
	_, _, err := credstore.Open("encrypted-file", t.TempDir(), nil)
	if err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_CREDENTIAL_KEY") || !strings.Contains(err.Error(), "openssl rand -base64 32") {
		t.Errorf("Open(encrypted-file) without a key = %v", err)
	}
}

// TestOpenEncryptedFileMovesTheFileStore: opening the encrypted file store
// moves what the unencrypted one beside it holds into it, so that the
// switch loses no login and leaves no value in clear; the note says how
// many.
func TestOpenEncryptedFileMovesTheFileStore(t *testing.T) {
	state := t.TempDir()
	plain := credstore.NewFile(filepath.Join(state, "credentials"))
	for k, v := range map[string]string{"secret/A": "canary-a", "oauth/gh/h/token": `{"access_token":"canary-t"}`} {
		if err := plain.Set(k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	var notes []string
	s, why, err := credstore.Open("encrypted-file", state, &credstore.OpenOptions{Key: testKey(1), Note: func(m string) { notes = append(notes, m) }})
	if err != nil || s.Name() != "encrypted-file" || why != "" {
		t.Fatalf("Open(encrypted-file) = %v, %q, %v", s, why, err)
	}
	if v, ok, err := s.Get("secret/A"); string(v) != "canary-a" || !ok || err != nil {
		t.Errorf("Get(secret/A) after the move = %q, %v, %v", v, ok, err)
	}
	if keys, err := plain.Keys(""); err != nil || len(keys) != 0 {
		t.Errorf("the unencrypted store still holds %v, %v", keys, err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "moved 2 credentials from the unencrypted file store") {
		t.Errorf("notes = %q", notes)
	}
	if _, ok := credstore.Unencrypted(s); ok {
		t.Error("Unencrypted says the encrypted store is unencrypted")
	}
	if got, want := credstore.Describe(s), "encrypted file store in "+filepath.Join(state, "credentials-encrypted"); got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	err = filepath.WalkDir(state, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if bytes.Contains(b, []byte("canary")) {
			t.Errorf("%s holds a value in clear after the move", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Opened again, there is nothing to move and nothing to say.
	notes = nil
	if _, _, err := credstore.Open("encrypted-file", state, &credstore.OpenOptions{Key: testKey(1), Note: func(m string) { notes = append(notes, m) }}); err != nil || len(notes) != 0 {
		t.Errorf("second Open = %v, notes %q", err, notes)
	}
}

// TestUnencrypted: the file store, and only it, is reported unencrypted.
func TestUnencrypted(t *testing.T) {
	dir := t.TempDir()
	if got, ok := credstore.Unencrypted(credstore.NewFile(dir)); !ok || got != dir {
		t.Errorf("Unencrypted(file) = %q, %v", got, ok)
	}
	if _, ok := credstore.Unencrypted(openEncrypted(t, dir, testKey(1))); ok {
		t.Error("Unencrypted(encrypted-file) = true")
	}
}

// TestEncryptedFileOneDamagedValue: a damaged value fails its own Get, not
// the whole store: the store opens, the other values read, and the damaged
// one can be stored again.
func TestEncryptedFileOneDamagedValue(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "creds")
	e := openEncrypted(t, dir, testKey(1))
	for _, k := range []string{"secret/A", "secret/B"} {
		if err := e.Set(k, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range valueFiles(t, dir) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)-1] ^= 1
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		break // the first only
	}
	e = openEncrypted(t, dir, testKey(1))
	_, _, errA := e.Get("secret/A")
	_, _, errB := e.Get("secret/B")
	if (errA == nil) == (errB == nil) {
		t.Fatalf("Get = %v, %v; want one damaged and one read", errA, errB)
	}
	for _, k := range []string{"secret/A", "secret/B"} {
		if err := e.Set(k, []byte("again")); err != nil {
			t.Fatal(err)
		}
		if v, _, err := e.Get(k); string(v) != "again" || err != nil {
			t.Errorf("Get(%s) after storing it again = %q, %v", k, v, err)
		}
	}
}
